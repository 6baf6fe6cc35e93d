"""`kafka-shim topics|groups|produce|consume` against a broker (this one, in process): the
everyday look-ups end to end, and a missing extra or a silent broker said in one line."""

from __future__ import annotations

import io
import socket
import sys
from collections.abc import Iterator

import pytest

from kafka_shim.shim.cli import kafka_tools
from kafka_shim.shim.cli import main as cli
from kafka_shim.shim.config.broker_config import BrokerConfig
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


def test_lag_lists_the_partitions_not_committed_and_an_unknown_group_is_an_error(
    bootstrap: str, capsys: pytest.CaptureFixture[str]
) -> None:
    b = ("--bootstrap-server", bootstrap)
    run(capsys, "topics", "create", "payments", "--partitions", "3", *b)
    args = kafka_tools.build_parser("produce").parse_args(["payments", *b])
    kafka_tools.produce(args, io.StringIO(), ["x\n", "y\n", "z\n", "w\n"])
    reset = ("groups", "reset-offsets", "audit", "--topic", "payments", "--to-offset", "0", "--execute", *b)
    run(capsys, *reset)
    run(capsys, "groups", "reset-offsets", "nobody", "--topic", "payments", "--to-latest", "--execute", *b)
    ends = [int(row.split("\t")[3]) for row in run(capsys, "groups", "lag", "nobody", *b).splitlines()[1:]]
    rows = [row.split("\t") for row in run(capsys, "groups", "lag", "audit", *b).splitlines()[1:]]
    assert rows == [["payments", str(p), "0", str(end), str(end)] for p, end in enumerate(ends)]
    # A group that committed one partition: the others are shown too, their lag from the log start.
    run(capsys, "groups", "reset-offsets", "one", "--topic", "payments", "--to-offset", "1", "--execute", *b)
    committed_one = ("groups", "lag", "one", *b)
    rows = [row.split("\t") for row in run(capsys, *committed_one).splitlines()[1:]]
    assert [(r[0], r[2], r[4]) for r in rows] == [("payments", "1", str(end - 1)) for end in ends]
    assert cli.main(["groups", "lag", "no-such-group", *b]) == 1
    assert capsys.readouterr().err == "kafka-shim groups: Consumer group 'no-such-group' does not exist.\n"
    assert cli.main(["groups", "describe", "no-such-group", *b]) == 1
    assert "does not exist" in capsys.readouterr().err


def test_a_broker_that_is_not_there_is_one_line_not_a_hang(capfd: pytest.CaptureFixture[str]) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    assert cli.main(["topics", "list", "--bootstrap-server", f"127.0.0.1:{port}", "--timeout-s", "1"]) == 1
    err = capfd.readouterr().err  # librdkafka writes to the process's stderr itself unless told not to
    assert err.startswith(f"kafka-shim topics: no answer from 127.0.0.1:{port}: ") and "Traceback" not in err
    assert err.count("\n") == 1 and "%3|" not in err
    assert f"(Connect to ipv4#127.0.0.1:{port} failed: Connection refused" in err


@pytest.mark.parametrize(("command", "module", "extra"), [("lag-report", "pyspark", "spark")])
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
