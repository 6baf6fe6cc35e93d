"""`kafka-shim topics|groups|produce|consume` against a broker (this one, in process): the
everyday look-ups end to end, and a missing extra or a silent broker said in one line."""

from __future__ import annotations

import io
import socket
import sys
from collections.abc import Iterator

import pytest

from kafka_shim.shim import cli, kafka_tools
from kafka_shim.shim.config import BrokerConfig
from kafka_shim.shim.server import BrokerThread


@pytest.fixture(scope="module")
def bootstrap() -> Iterator[str]:
    thread = BrokerThread(BrokerConfig(port=0, data_dir=None)).start()
    yield thread.bootstrap
    thread.stop()


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    assert cli.main(list(argv)) == 0, capsys.readouterr().err
    return capsys.readouterr().out


def test_topics_produce_consume_groups_lag_and_reset(
    bootstrap: str, capsys: pytest.CaptureFixture[str]
) -> None:
    b = ("--bootstrap-server", bootstrap)
    assert "Created topic orders." in run(
        capsys, "topics", "create", "orders", "--partitions", "2", *b, "--config", "retention.ms=60000"
    )
    assert "orders" in run(capsys, "topics", "list", *b).split()
    described = run(capsys, "topics", "describe", "orders", *b)
    assert "PartitionCount: 2" in described and "retention.ms=60000" in described
    args = kafka_tools.build_parser("produce").parse_args(["orders", *b, "--key-separator", ":"])
    kafka_tools.produce(args, io.StringIO(), ["k1:a\n", "k1:b\n", "k2:c\n"])
    consumed = run(
        capsys, "consume", "orders", "--group", "billing", "--from-beginning", "--max-messages", "3", *b
    )
    assert sorted(consumed.split()) == ["a", "b", "c"]
    assert "billing" in run(capsys, "groups", "list", *b)
    lag = run(capsys, "groups", "lag", "billing", *b).splitlines()
    assert lag[0].split("\t") == ["TOPIC", "PARTITION", "CURRENT-OFFSET", "LOG-END-OFFSET", "LAG"]
    assert sum(int(row.split("\t")[4]) for row in lag[1:]) == 0
    plan = run(capsys, "groups", "reset-offsets", "billing", "--topic", "orders", "--to-earliest", *b)
    assert "dry run" in plan
    run(capsys, "groups", "reset-offsets", "billing", "--topic", "orders", "--to-earliest", "--execute", *b)
    lag = run(capsys, "groups", "lag", "billing", *b).splitlines()
    assert sum(int(row.split("\t")[4]) for row in lag[1:]) == 3
    assert "Deleted topic orders." in run(capsys, "topics", "delete", "orders", *b)


def test_a_broker_that_is_not_there_is_one_line_not_a_hang(capsys: pytest.CaptureFixture[str]) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    assert cli.main(["topics", "list", "--bootstrap-server", f"127.0.0.1:{port}", "--timeout-s", "1"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("kafka-shim topics: no answer from 127.0.0.1:") and "Traceback" not in err


@pytest.mark.parametrize(
    ("command", "module", "extra"), [("lag-report", "pyspark", "spark"), ("topics", "confluent_kafka", "cli")]
)
def test_a_missing_extra_says_what_to_install(
    command: str, module: str, extra: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    for loaded in [name for name in sys.modules if name == module or name.startswith(module + ".")]:
        monkeypatch.delitem(sys.modules, loaded)
    monkeypatch.setitem(sys.modules, module, None)  # importing it fails as if not installed
    for loaded in [name for name in sys.modules if name.startswith("kafka_shim.pipeline")]:
        monkeypatch.delitem(sys.modules, loaded)
    assert cli.main([command, "--help"] if command == "lag-report" else [command, "list"]) == 2
    err = capsys.readouterr().err
    assert f"pip install 'kafka-shim[{extra}]'" in err and "Traceback" not in err


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["--version"]) == 0
    assert capsys.readouterr().out.startswith("kafka-shim ")
