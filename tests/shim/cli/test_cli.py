"""The command line: flags, Kafka config names, refusals, and the real process."""

from __future__ import annotations

import contextlib
import gc
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from kafka_shim.shim.cli.main import SUBCOMMANDS, TOOLS, build_parser, config_from_args, main
from kafka_shim.shim.config.broker_config import ConfigError, unknown_configs_report


def parse(*argv: str):  # type: ignore[no-untyped-def]
    return config_from_args(build_parser().parse_args(list(argv)))


def test_defaults_serve_loopback_9092_with_no_rebalance_delay() -> None:
    config = parse()
    assert (config.host, config.port) == ("127.0.0.1", 9092)
    assert config.initial_rebalance_delay_ms == 0
    assert config.max_request_bytes == 100 * 1024 * 1024
    assert config.min_session_timeout_ms == 6000 and config.max_session_timeout_ms == 1_800_000


def test_kafka_config_names_flags_and_files(tmp_path: Path) -> None:
    props = tmp_path / "broker.properties"
    props.write_text("# comment\ngroup.max.size = 5\nnum.partitions: 4\n")
    config = parse(
        "--config-file",
        str(props),
        "--config",
        "group.initial.rebalance.delay.ms=3000",
        "--config",
        "auto.create.topics.enable=false",
        "--num-partitions",
        "3",
    )
    assert config.max_group_size == 5
    assert config.num_partitions == 3  # the flag wins over the file
    assert config.initial_rebalance_delay_ms == 3000
    assert config.auto_create_topics is False


def test_brokers_and_racks_name_the_emulated_nodes() -> None:
    config = parse("--brokers", "3", "--racks", "a, b", "--config", "node.id=4")
    assert (config.brokers, config.racks, config.node_id) == (3, ("a", "b"), 4)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--strict-config", "--config", "no.such.key=1"], "unknown config: 'no.such.key'"),
        (["--config", "group.max.size=zero"], "bad value 'zero' for group.max.size"),
        (["--config", "group.max.size=0"], "must be at least 1"),
        (["--config", "auto.create.topics.enable=yes"], "must be true or false"),
        (["--config", "novalue"], "expected KEY=VALUE"),
        (["--port", "70000"], "is not a TCP port"),
        (["--busy-poll-us", "-1"], "--busy-poll-us -1 is negative"),
        (["--brokers", "0"], "--brokers 0: at least one broker"),
        (
            ["--brokers", "3", "--control"],
            "--control 127.0.0.1:9094: port 9094 is broker 2's listener PLAINTEXT's",
        ),
        (
            [
                "--brokers",
                "2",
                "--listeners",
                "A://:9092,B://:9093",
                "--config",
                "listener.security.protocol.map=A:PLAINTEXT,B:PLAINTEXT",
            ],
            "broker 1's listener A would take port 9093, broker 0's listener B's",
        ),
        (
            ["--config", "group.min.session.timeout.ms=10", "--config", "group.max.session.timeout.ms=5"],
            "exceeds group.max.session.timeout.ms",
        ),
        (["--config-file", "/nonexistent/broker.properties"], "cannot read config file"),
    ],
)
def test_bad_configuration_is_refused_with_a_clear_message(argv: list[str], message: str) -> None:
    with pytest.raises(ConfigError, match=message.replace("(", r"\(").replace(")", r"\)")):
        parse(*argv)


def test_main_exits_2_on_bad_config_without_traceback(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--config", "group.max.size=-3"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("kafka-shim: bad value '-3' for group.max.size")
    assert "Traceback" not in err


@pytest.mark.parametrize("argv", [["--config", "group.max.size=-3"], ["--version"], ["ctl", "--help"]])
def test_main_leaves_the_garbage_collector_running(argv: list[str]) -> None:
    """A start pauses the collector (`python -m kafka_shim` before its imports); every way out of
    main, a refused configuration, --version or a subcommand, runs with it again."""
    gc.disable()
    try:
        with contextlib.suppress(SystemExit):  # argparse's --help exits
            main(argv)
        assert gc.isenabled()
    finally:
        gc.enable()


def test_process_prints_listening_line_and_stops_on_sigterm(tmp_path: Path) -> None:
    # No flags at all, as a user starts it: data goes to the default directory,
    # here redirected away from the user's own.
    proc = subprocess.Popen(
        [sys.executable, "-m", "kafka_shim", "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1", "XDG_DATA_HOME": str(tmp_path)},
    )
    assert proc.stdout is not None and proc.stderr is not None
    try:
        line = proc.stdout.readline()
        assert "listening on 127.0.0.1:" in line
        assert str(tmp_path / "kafka-shim") in line
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=10) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert "Traceback" not in proc.stderr.read()


def test_port_in_use_is_a_clear_error_and_leaves_no_fresh_data_directory(tmp_path: Path) -> None:
    import socket

    data_dir = tmp_path / "fresh"
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        held.listen()
        port = held.getsockname()[1]
        result = subprocess.run(
            [sys.executable, "-m", "kafka_shim", "--port", str(port), "--data-dir", str(data_dir)],
            capture_output=True,
            text=True,
            timeout=20,
        )
    assert result.returncode == 1
    assert f"cannot listen on 127.0.0.1:{port}" in result.stderr
    assert "Traceback" not in result.stderr
    assert not data_dir.exists()


KAFKA_SERVER_PROPERTIES = Path(__file__).parent.parent / "data" / "kafka-kraft-server.properties"


def test_kafkas_shipped_server_properties_start_the_broker(tmp_path: Path) -> None:
    """Kafka's own config/kraft/server.properties, as shipped: its KRaft controller listener is
    neither bound nor advertised, log.dirs is the data directory, log.retention.hours is
    log.retention.ms, and the keys without effect here are named once, with why."""
    # Only where it listens changes: port 9092 may be taken on the machine running the test.
    listeners = "listeners=PLAINTEXT://127.0.0.1:0,CONTROLLER://:9093"
    # A plugin's key, as a real file carries: warned of as Kafka does, and the broker starts.
    plugin = "confluent.metrics.reporter.topic.replicas=1"
    argv = ["--config-file", str(KAFKA_SERVER_PROPERTIES), "--config", listeners, "--config", plugin]
    config = parse(*argv, "--config", f"log.dirs={tmp_path / 'logs'}")
    assert config.data_dir == tmp_path / "logs"
    assert config.log_retention_ms == 168 * 3_600_000
    assert [listener.name for listener in config.listener_endpoints()] == ["PLAINTEXT"]
    # The schema registry binds its port at start: a free one, as 8081 may be taken here too.
    http = ["--console", "off", "--schema-registry", "127.0.0.1:0"]
    proc = subprocess.Popen(
        [sys.executable, "-m", "kafka_shim", *argv, *http, "--data-dir", str(tmp_path / "data")],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    assert proc.stdout is not None and proc.stderr is not None
    try:
        assert "listening on 127.0.0.1:" in proc.stdout.readline()
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=10) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    err = proc.stderr.read()
    assert "Traceback" not in err
    kraft = [line for line in err.splitlines() if "process.roles" in line]
    assert len(kraft) == 1 and "accepted, no effect here" in kraft[0] and "controller quorum" in kraft[0]
    assert "num.network.threads" in err and "offsets.topic.replication.factor" in err
    warned = [line.partition(" WARNING ")[2] for line in err.splitlines() if " WARNING " in line]
    assert warned == [
        "kafka_shim.config: The configuration 'confluent.metrics.reporter.topic.replicas' was supplied "
        "but isn't a known config."
    ]


@pytest.mark.parametrize(
    ("key", "warning"),
    [
        (
            "my.plugin.setting=1",
            "The configuration 'my.plugin.setting' was supplied but isn't a known config.",
        ),
        (
            "log.retension.ms=5",
            "The configuration 'log.retension.ms' was supplied but isn't a known config. "
            "Did you mean log.retention.ms or log.retention.minutes or log.retention.hours?",
        ),
    ],
)
def test_an_unknown_key_is_warned_of_and_refused_only_under_strict_config(
    tmp_path: Path, key: str, warning: str
) -> None:
    properties = tmp_path / "server.properties"
    properties.write_text(f"num.partitions=4\n{key}\n")
    config = parse("--config-file", str(properties))
    assert config.num_partitions == 4 and config.unknown_configs == (key.partition("=")[0],)
    assert unknown_configs_report(config) == [warning]
    assert key.partition("=")[0] not in config.other_configs
    with pytest.raises(ConfigError, match="unknown config: "):
        parse("--config-file", str(properties), "--strict-config")


def test_help_lists_every_command(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as helped:
        main(["--help"])
    assert helped.value.code == 0
    text = " ".join(capsys.readouterr().out.split())
    for command in (*TOOLS, *SUBCOMMANDS):
        assert f" {command}," in text or f" {command} " in text, command


@pytest.mark.parametrize(
    "argv", [["topics", "list"], ["groups", "lag"], ["produce"], ["consume"], *[[c] for c in SUBCOMMANDS]]
)
def test_every_subcommand_has_help(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    code: str | int | None
    try:
        code = main([*argv, "--help"])
    except SystemExit as exited:
        code = exited.code
    assert code == 0
    out = capsys.readouterr().out
    assert out.startswith("usage: kafka-shim"), out[:200]
