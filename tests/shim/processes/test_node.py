"""The `__consumer_offsets` and `__transaction_state` partition counts every broker process
places groups and transactional ids by (shim.processes.supervisor), and a process's own settings
(shim.processes.node.process_config)."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest

from kafka_shim.protocol.internal_topics import OFFSETS_TOPIC, TRANSACTION_TOPIC
from kafka_shim.shim.cli.main import build_parser, config_from_args
from kafka_shim.shim.config.broker_config import BrokerConfig
from kafka_shim.shim.processes.node import process_config
from kafka_shim.shim.processes.spec import NodeSpec
from kafka_shim.shim.processes.supervisor import broker_dir, offsets_partitions, transaction_partitions
from kafka_shim.storage.data_dir import DataDir, TopicRecord


def config(tmp_path: Path, *argv: str) -> BrokerConfig:
    return config_from_args(build_parser().parse_args([*argv, "--data-dir", str(tmp_path)]))


def made_with(config: BrokerConfig, position: int, partitions: int) -> None:
    """Broker `position`'s catalog names __consumer_offsets with `partitions` partitions."""
    directory = broker_dir(config, position)
    directory.mkdir(parents=True, exist_ok=True)
    DataDir(directory).write_catalog([TopicRecord(OFFSETS_TOPIC, uuid.uuid4(), partitions)])


@pytest.mark.parametrize(
    ("argv", "on_disk", "partitions"),
    [
        # Nothing on disk, nothing set: one partition per broker, so each process leads one.
        (["--brokers", "2"], {}, 2),
        (["--brokers", "3"], {}, 3),
        # Set, even to kafka-shim's default: as set.
        (["--brokers", "2", "--config", "offsets.topic.num.partitions=1"], {}, 1),
        (["--brokers", "2", "--config", "offsets.topic.num.partitions=50"], {}, 50),
        # A broker's copy made before (by any process): its count, for every process.
        (["--brokers", "2"], {0: 1}, 1),
        (["--brokers", "3"], {2: 1}, 1),
        (["--brokers", "2", "--config", "offsets.topic.num.partitions=50"], {1: 4}, 4),
    ],
)
def test_every_process_places_groups_by_one_count(
    argv: list[str], on_disk: dict[int, int], partitions: int, tmp_path: Path
) -> None:
    settings = config(tmp_path, *argv)
    for position, count in on_disk.items():
        made_with(settings, position, count)
    assert offsets_partitions(settings) == partitions


def test_a_process_runs_with_its_own_directory_and_the_chosen_count(tmp_path: Path) -> None:
    settings = config(tmp_path, "--brokers", "2")
    spec = NodeSpec([], 1, 2, str(tmp_path / "broker-2"), str(tmp_path / "broker-1"), {}, {}, {}, -1, 2, 2)
    own = process_config(settings, spec)
    assert own.offsets_topic_num_partitions == 2
    assert own.data_dir == tmp_path / "broker-2"
    assert own.console_listener is None and own.schema_registry_listener is None


@pytest.mark.parametrize(
    ("argv", "on_disk", "partitions"),
    [
        (["--brokers", "2"], {}, 2),  # one per broker: transactions spread as groups do
        (["--brokers", "2", "--config", "transaction.state.log.num.partitions=1"], {}, 1),
        (["--brokers", "3"], {1: 1}, 1),  # a copy made before keeps every id where its state is
    ],
)
def test_every_process_places_transactional_ids_by_one_count(
    argv: list[str], on_disk: dict[int, int], partitions: int, tmp_path: Path
) -> None:
    settings = config(tmp_path, *argv)
    for position, count in on_disk.items():
        directory = broker_dir(settings, position)
        directory.mkdir(parents=True, exist_ok=True)
        DataDir(directory).write_catalog([TopicRecord(TRANSACTION_TOPIC, uuid.uuid4(), count)])
    assert transaction_partitions(settings) == partitions
    spec = NodeSpec([], 0, 1, str(tmp_path / "b"), str(tmp_path / "b"), {}, {}, {}, -1, 2, partitions)
    assert process_config(settings, spec).transaction_state_log_num_partitions == partitions
