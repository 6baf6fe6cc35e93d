"""`kafka-shim`: start the broker. Imports stay lean: start-up time matters."""

from __future__ import annotations

import argparse
import gc
import logging
import os
import shutil
import sys
from dataclasses import replace
from pathlib import Path

from kafka_shim.protocol.releases import NEWEST, RELEASES
from kafka_shim.shim.config.broker_config import (
    BrokerConfig,
    ConfigError,
    apply_kafka_configs,
    no_effect_report,
    parse_assignment,
    read_properties,
    unknown_configs_error,
    unknown_configs_report,
    unknown_names,
)

LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR")
DEFAULT_CONTROL = "127.0.0.1:9094"  # where --control listens given no address, and ctl's default


# Where the command line serves the console unless told otherwise (loopback only).
CLI_CONSOLE = "127.0.0.1:8080"
# Where the command line serves the schema registry unless told otherwise: Confluent's port.
CLI_SCHEMA_REGISTRY = "127.0.0.1:8081"


def build_parser() -> argparse.ArgumentParser:
    defaults = BrokerConfig()
    parser = argparse.ArgumentParser(
        prog="kafka-shim",
        description="A Kafka wire-protocol-compatible broker for local development. Other commands: "
        f"{', '.join(TOOLS)} (Kafka's everyday tools, for any broker), {', '.join(SUBCOMMANDS)} "
        "(each with --help).",
    )
    for add_options in (
        _listening_options,
        _surface_options,
        _cluster_options,
        _storage_options,
        _tuning_options,
        _test_broker_options,
        _config_options,
    ):
        add_options(parser, defaults)
    return parser


def _listening_options(parser: argparse.ArgumentParser, defaults: BrokerConfig) -> None:
    """Where the broker listens and what it advertises."""
    parser.add_argument(
        "--host", help=f"address to listen on, one PLAINTEXT listener with --port (default {defaults.host})"
    )
    parser.add_argument("--port", type=int, help=f"0 picks a free port (default {defaults.port})")
    parser.add_argument("--advertised-host", help="host clients are told to connect to (default: --host)")
    parser.add_argument(
        "--listeners",
        metavar="NAME://HOST:PORT,...",
        help="Kafka's listeners: several named listeners instead of --host/--port, "
        "e.g. PLAINTEXT://:9092,DOCKER://:19092 (an empty host is every interface)",
    )
    parser.add_argument(
        "--advertised-listeners",
        metavar="NAME://HOST:PORT,...",
        help="Kafka's advertised.listeners: where clients of each listener are told to connect "
        "(default: the listeners themselves; port 0: the bound port)",
    )


def _surface_options(parser: argparse.ArgumentParser, _defaults: BrokerConfig) -> None:
    """The HTTP surfaces beside the Kafka listeners: the console and the schema registry."""
    parser.add_argument(
        "--console",
        metavar="HOST:PORT|off",
        default=CLI_CONSOLE,
        help="serve the web console and Prometheus /metrics here (default %(default)s; "
        "off: none; a busy port is reported and the broker runs without it)",
    )
    parser.add_argument(
        "--schema-registry",
        metavar="HOST:PORT|off",
        default=CLI_SCHEMA_REGISTRY,
        help="serve a schema registry with Confluent's REST API here (default %(default)s; off: "
        "none; a busy port is reported and the broker runs without it; docs/schema-registry.md)",
    )
    parser.add_argument(
        "--console-actions",
        action="store_true",
        help="let the console reset an inactive group's offsets and delete records (default: read-only)",
    )


def _cluster_options(parser: argparse.ArgumentParser, defaults: BrokerConfig) -> None:
    """The emulated brokers of one process (or one process each) and their racks."""
    parser.add_argument(
        "--brokers",
        type=int,
        default=defaults.brokers,
        metavar="N",
        help="emulate N brokers in this process (node ids node.id..node.id+N-1): each serves the "
        "listeners, fixed ports shifted by its position (9092, 9093, ...); partition leaders and "
        "coordinators are spread over them, one copy of the data (default %(default)s)",
    )
    parser.add_argument(
        "--process-per-broker",
        action="store_true",
        help="with --brokers N: run each broker in its own process, on its own core (a prototype: "
        "on disk; no transactions, share groups, ACLs or control endpoint yet; "
        "docs/performance.md)",
    )
    parser.add_argument(
        "--racks",
        metavar="RACK,...",
        help="the brokers' racks (broker.rack), given in turn to node 0, 1, ...: e.g. a,b,c",
    )


def _storage_options(parser: argparse.ArgumentParser, defaults: BrokerConfig) -> None:
    """Where the data lives and when it reaches the disk."""
    storage = parser.add_mutually_exclusive_group()
    storage.add_argument(
        "--data-dir", type=Path, help=f"keep topics on disk here (default {default_data_dir()})"
    )
    storage.add_argument("--memory", action="store_true", help="keep everything in memory, nothing on disk")
    parser.add_argument(
        "--fsync",
        choices=("always", "interval", "never"),
        default=defaults.fsync,
        help="when appends are fsynced: before each acknowledgement, every --fsync-interval-ms, "
        "or never (left to the OS); every acknowledged write survives a broker crash regardless "
        "(default %(default)s)",
    )
    parser.add_argument(
        "--fsync-interval-ms", type=int, help="log.flush.interval.ms for --fsync interval (default 1000)"
    )
    parser.add_argument(
        "--truncate-corrupt",
        action="store_true",
        help="on start, drop everything from a corrupt batch on instead of refusing to start",
    )


def _tuning_options(parser: argparse.ArgumentParser, defaults: BrokerConfig) -> None:
    """Kafka settings with a flag of their own, and the connections' busy polling."""
    parser.add_argument(
        "--initial-rebalance-delay-ms",
        type=int,
        help="group.initial.rebalance.delay.ms (default 0; Apache Kafka's default is 3000)",
    )
    parser.add_argument(
        "--num-partitions", type=int, help="num.partitions for auto-created topics (default 1)"
    )
    parser.add_argument(
        "--max-request-bytes", type=int, help="largest request frame accepted (default 104857600)"
    )
    parser.add_argument(
        "--busy-poll-us",
        type=int,
        default=defaults.busy_poll_us,
        help="poll a connection whose client answered within this many microseconds last time "
        "for that long before sleeping; trades some CPU for latency, 0 turns it off "
        "(default %(default)s)",
    )


def _test_broker_options(parser: argparse.ArgumentParser, defaults: BrokerConfig) -> None:
    """The test broker's front ends (docs/test-broker.md)."""
    test_broker = parser.add_argument_group("test broker (docs/test-broker.md)")
    test_broker.add_argument(
        "--control",
        nargs="?",
        const=DEFAULT_CONTROL,
        metavar="HOST:PORT",
        help=f"serve the control endpoint (fault rules, the broker's clock, recorded requests, "
        "--brokers' stops and moves) "
        f"for `kafka-shim ctl` and HTTP clients (default address {DEFAULT_CONTROL}; port 0: a free one)",
    )
    test_broker.add_argument(
        "--fault-rules", type=Path, metavar="FILE", help="fault rules to start with: a JSON list of rules"
    )
    test_broker.add_argument(
        "--record-requests",
        type=int,
        default=defaults.record_requests,
        metavar="N",
        help="keep the last N requests and answers for queries (default %(default)s: none)",
    )
    test_broker.add_argument(
        "--trace-file",
        type=Path,
        metavar="PATH",
        help="append every request and answer to PATH as JSON lines",
    )


def _config_options(parser: argparse.ArgumentParser, _defaults: BrokerConfig) -> None:
    """The release emulated, logging, and Kafka's configs from flags, files and users."""
    parser.add_argument(
        "--emulate",
        choices=list(RELEASES),
        help="answer as this Apache Kafka release exactly: its API versions (refusing those KIP-896 "
        "removed from 4.0), feature levels, changed defaults and answers, and the first Metadata "
        f"answer for an auto-created topic; see docs/emulation.md (default: {NEWEST}'s answers, "
        "serving every version any of these releases served, logging a client that uses one Kafka 4 "
        "removed, and answering auto-created topics at once)",
    )
    parser.add_argument("--log-level", default="INFO", type=str.upper, choices=LOG_LEVELS)
    parser.add_argument("--version", action="store_true", help="print kafka-shim's version and exit")
    parser.add_argument(
        "--config",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="any of Apache Kafka's broker configs, e.g. group.max.size=10, or listener.name.<listener>."
        "<ssl/sasl setting> for one listener (repeatable); those without effect here are reported at "
        "start; the list: docs/configuration.md",
    )
    parser.add_argument("--config-file", type=Path, help="a Kafka-style .properties file of broker configs")
    parser.add_argument(
        "--strict-config",
        action="store_true",
        help="refuse a config key that is none of Kafka's (default: warn, as Kafka does, and go on)",
    )
    parser.add_argument(
        "--user",
        action="append",
        default=[],
        metavar="NAME:PASSWORD",
        help="a SASL user (repeatable): PLAIN and SCRAM-SHA-256/512 credentials, salted, kept in the "
        "data directory (never the password); more users through the admin API",
    )


def parse_user(text: str) -> tuple[str, str]:
    name, sep, password = text.partition(":")
    if not sep or not name or not password:
        raise ConfigError(f"--user takes NAME:PASSWORD, got {text!r}")
    return name, password


def default_data_dir() -> Path:
    """$XDG_DATA_HOME/kafka-shim (~/.local/share/kafka-shim): the same topics
    whichever directory the broker is started from."""
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "kafka-shim"


def config_from_args(args: argparse.Namespace) -> BrokerConfig:
    if args.port is not None and not 0 <= args.port <= 65535:
        raise ConfigError(f"--port {args.port} is not a TCP port")
    if args.busy_poll_us < 0:
        raise ConfigError(f"--busy-poll-us {args.busy_poll_us} is negative")
    if args.brokers < 1:
        raise ConfigError(f"--brokers {args.brokers}: at least one broker")
    if args.record_requests < 0:
        raise ConfigError(f"--record-requests {args.record_requests} is negative")
    if args.control is not None:
        from kafka_shim.shim.web.http_server import parse_address

        try:
            parse_address(args.control, "--control")
        except ValueError as exc:
            raise ConfigError(str(exc)) from None
    pairs: dict[str, str] = {}
    if args.config_file is not None:
        pairs.update(read_properties(args.config_file))
    for text in args.config:
        name, value = parse_assignment(text)
        pairs[name] = value
    flags = {
        "group.initial.rebalance.delay.ms": args.initial_rebalance_delay_ms,
        "num.partitions": args.num_partitions,
        "socket.request.max.bytes": args.max_request_bytes,
        "log.flush.interval.ms": args.fsync_interval_ms,
        "listeners": args.listeners,
        "advertised.listeners": args.advertised_listeners,
    }
    pairs.update({name: str(value) for name, value in flags.items() if value is not None})
    unknown = unknown_names(pairs)
    if unknown and args.strict_config:
        raise unknown_configs_error(unknown)
    pairs = {name: value for name, value in pairs.items() if name not in unknown}
    shorthand = [flag for flag, value in (("--host", args.host), ("--port", args.port)) if value is not None]
    if shorthand and "listeners" in pairs:
        raise ConfigError(f"{' and '.join(shorthand)} and listeners both say where to listen: use one")
    if args.advertised_host is not None and "advertised.listeners" in pairs:
        raise ConfigError("--advertised-host and advertised.listeners both say what to advertise: use one")
    defaults = BrokerConfig()
    base = replace(
        defaults,
        host=defaults.host if args.host is None else args.host,
        port=defaults.port if args.port is None else args.port,
        advertised_host=args.advertised_host,
        log_level=args.log_level,
        data_dir=None if args.memory else (args.data_dir or default_data_dir()),
        fsync=args.fsync,
        truncate_corrupt=args.truncate_corrupt,
        busy_poll_us=args.busy_poll_us,
        users=tuple(parse_user(text) for text in args.user),
        console_listener=None if args.console == "off" else args.console,
        console_actions=args.console_actions,
        schema_registry_listener=None if args.schema_registry == "off" else args.schema_registry,
        brokers=args.brokers,
        racks=tuple(r.strip() for r in (args.racks or "").split(",") if r.strip()),
        control_listener=args.control,
        fault_rules_file=args.fault_rules,
        record_requests=args.record_requests,
        trace_file=args.trace_file,
        emulate=args.emulate,
        auto_created_topic_answered_at_once=args.emulate is None,
        unknown_configs=tuple(unknown),
    )
    config = apply_kafka_configs(base, pairs).with_release_defaults()
    # A flag beats log.dirs from a file or --config, as the command line beats the file.
    return replace(config, data_dir=args.data_dir) if args.data_dir is not None else config


# Subcommands other than starting the broker, imported only when asked for (Spark is heavy).
SUBCOMMANDS = {
    "lag-report": "kafka_shim.pipeline.lag.cli:main",
    "dev-certs": "kafka_shim.shim.security.dev_certs:main",
    "container": "kafka_shim.shim.cli.container:main",
    "healthcheck": "kafka_shim.shim.cli.container:healthcheck",
    "ctl": "kafka_shim.shim.cli.ctl:main",
    "schemas": "kafka_shim.shim.schema_registry.cli:main",
}
# Kafka's everyday tools for any broker (shim.cli.kafka_tools): given the command name too.
TOOLS = ("topics", "groups", "produce", "consume")
# What a subcommand's missing import is installed with: `pip install 'kafka-shim[EXTRA]'`
# (confluent-kafka, the everyday tools' client, is a dependency of the default install).
EXTRAS = {"pyspark": "spark", "pyarrow": "spark"}


def subcommand(argv: list[str]) -> int:
    import importlib

    try:
        if argv[0] in TOOLS:
            from kafka_shim.shim.cli import kafka_tools

            return kafka_tools.main(argv)
        module, _, function = SUBCOMMANDS[argv[0]].partition(":")
        return int(getattr(importlib.import_module(module), function)(argv[1:]))
    except ModuleNotFoundError as exc:
        extra = EXTRAS.get((exc.name or "").split(".")[0])
        if extra is None:
            raise
        print(
            f"kafka-shim {argv[0]} needs {exc.name}, which is not installed: "
            f"pip install 'kafka-shim[{extra}]'",
            file=sys.stderr,
        )
        return 2


def version() -> str:
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as installed

    try:
        return installed("kafka-shim")
    except PackageNotFoundError:  # run from a source tree that is not installed
        return "unknown (not installed)"


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv and (argv[0] in SUBCOMMANDS or argv[0] in TOOLS):
        gc.enable()  # `python -m kafka_shim` paused it for a broker's start
        return subcommand(argv)
    # Until the Kafka listener is bound the cyclic garbage collector stays paused, and then
    # what start-up made is frozen (gc.freeze): it is long-lived (modules, classes, the
    # protocol's declarations, open logs) with little garbage, and some 70 passes over it cost
    # ~10 ms of CPU before the first answer. Enabling it without the freeze would only move that
    # cost: the first pass after would walk everything allocated while it was paused. Later full
    # passes skip the frozen objects too. The cost: the few thousand objects of cyclic garbage
    # start-up leaves (measured: ~2,000) stay, once.
    gc.disable()
    try:
        return start_broker(argv)
    finally:
        gc.enable()


def start_broker(argv: list[str]) -> int:
    """Run the broker the command line describes until a signal stops it; the exit status."""
    if "--version" in argv:
        print(f"kafka-shim {version()}")
        return 0
    args = build_parser().parse_args(argv)
    try:
        config = config_from_args(args)
    except ConfigError as exc:
        print(f"kafka-shim: {exc}", file=sys.stderr)
        return 2
    logging.basicConfig(
        level=config.log_level, format="%(asctime)s %(levelname)s %(name)s: %(message)s", stream=sys.stderr
    )
    for line in unknown_configs_report(config):
        logging.getLogger("kafka_shim.config").warning(line)
    for line in no_effect_report(config):
        logging.getLogger("kafka_shim.config").info(line)
    if args.process_per_broker:
        from kafka_shim.shim.processes.supervisor import supervise

        gc.enable()  # the supervisor runs until stopped; each broker process pauses its own
        return supervise(config, argv, storage_line(config))
    import trio

    from kafka_shim.shim.broker import Broker
    from kafka_shim.shim.net.listening import BoundListener
    from kafka_shim.shim.net.running import run_until_signalled
    from kafka_shim.shim.testbroker.faults import FaultSpecError
    from kafka_shim.storage.errors import StorageStartupError

    # A data directory this start creates is removed again if the broker cannot listen.
    fresh_data_dir = config.data_dir is not None and not config.data_dir.exists()
    try:
        broker = Broker(config)
    except FaultSpecError as exc:
        print(f"kafka-shim: {exc}", file=sys.stderr)
        return 2
    except StorageStartupError as exc:
        print(f"kafka-shim: {exc}", file=sys.stderr)
        return 1

    def on_listening(listeners: list[BoundListener]) -> None:
        gc.freeze()
        gc.enable()
        (host, port), advertised = listeners[0].bound, listeners[0].advertised
        if len(listeners) == 1 and advertised == (host, port):
            where = f"{host}:{port}"  # the plain case: clients connect where it listens
        elif config.brokers > 1 and all(each.bound == each.advertised for each in listeners):
            where = ", ".join(
                f"{h}:{p} (broker {each.node_id})" for each in listeners for h, p in [each.bound]
            )
        else:
            where = ", ".join(listener.describe() for listener in listeners)
        print(f"kafka-shim listening on {where} (storage: {storage_line(config)})", flush=True)

    try:
        trio.run(run_until_signalled, broker, on_listening)
    except OSError as exc:
        where = exc.filename or config.effective_listeners()
        print(f"kafka-shim: cannot listen on {where}: {exc.strerror}", file=sys.stderr)
        listened = False
    else:
        listened = True
    finally:
        broker.close()
    if not listened and fresh_data_dir and config.data_dir is not None:
        shutil.rmtree(config.data_dir, ignore_errors=True)
    return 0 if listened else 1


def storage_line(config: BrokerConfig) -> str:
    if config.data_dir is None:
        return "in memory"
    if config.fsync == "interval":
        return f"{config.data_dir}, fsync every {config.log_flush_interval_ms} ms"
    return f"{config.data_dir}, fsync {config.fsync}"
