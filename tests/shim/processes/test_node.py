"""A broker process's own settings (shim.processes.node.process_config)."""

from __future__ import annotations

from pathlib import Path

import pytest

from kafka_shim.shim.cli.main import build_parser, config_from_args
from kafka_shim.shim.processes.node import process_config


@pytest.mark.parametrize(
    ("argv", "partitions"),
    [
        # Unset: one __consumer_offsets partition per broker, so every process leads one.
        (["--brokers", "2"], 2),
        (["--brokers", "3"], 3),
        # Set, even to kafka-shim's default: kept.
        (["--brokers", "2", "--config", "offsets.topic.num.partitions=1"], 1),
        (["--brokers", "2", "--config", "offsets.topic.num.partitions=50"], 50),
    ],
)
def test_groups_spread_over_processes_unless_set(argv: list[str], partitions: int, tmp_path: Path) -> None:
    config = config_from_args(build_parser().parse_args([*argv, "--data-dir", str(tmp_path / "all")]))
    own = process_config(config, tmp_path / "broker-1")
    assert own.offsets_topic_num_partitions == partitions
    assert own.data_dir == tmp_path / "broker-1"
    assert own.console_listener is None and own.schema_registry_listener is None
