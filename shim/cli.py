"""`kafka-shim`: start the broker. Imports stay lean: start-up time matters."""

from __future__ import annotations

import argparse
import logging
import sys
from dataclasses import replace
from pathlib import Path

from shim.config import (
    KAFKA_NAMES,
    BrokerConfig,
    ConfigError,
    apply_kafka_configs,
    parse_assignment,
    read_properties,
)

LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR")


def build_parser() -> argparse.ArgumentParser:
    defaults = BrokerConfig()
    parser = argparse.ArgumentParser(
        prog="kafka-shim",
        description="A Kafka wire-protocol-compatible broker for local development.",
    )
    parser.add_argument("--host", default=defaults.host, help="address to listen on (default %(default)s)")
    parser.add_argument(
        "--port", type=int, default=defaults.port, help="0 picks a free port (default %(default)s)"
    )
    parser.add_argument("--advertised-host", help="host clients are told to connect to (default: --host)")
    storage = parser.add_mutually_exclusive_group()
    storage.add_argument("--data-dir", type=Path, help="keep data on disk here (not supported yet)")
    storage.add_argument(
        "--memory", action="store_true", help="keep everything in memory (the default for now)"
    )
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
    parser.add_argument("--log-level", default="INFO", type=str.upper, choices=LOG_LEVELS)
    parser.add_argument(
        "--config",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a Kafka broker config, e.g. group.max.size=10 (repeatable); names: "
        + ", ".join(sorted(KAFKA_NAMES)),
    )
    parser.add_argument("--config-file", type=Path, help="a Kafka-style .properties file of broker configs")
    return parser


def config_from_args(args: argparse.Namespace) -> BrokerConfig:
    if args.data_dir is not None:
        raise ConfigError(
            "--data-dir: durable on-disk storage is not implemented yet; run with --memory (the default)"
        )
    if not 0 <= args.port <= 65535:
        raise ConfigError(f"--port {args.port} is not a TCP port")
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
    }
    pairs.update({name: str(value) for name, value in flags.items() if value is not None})
    base = replace(
        BrokerConfig(),
        host=args.host,
        port=args.port,
        advertised_host=args.advertised_host,
        log_level=args.log_level,
    )
    return apply_kafka_configs(base, pairs)


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        config = config_from_args(args)
    except ConfigError as exc:
        print(f"kafka-shim: {exc}", file=sys.stderr)
        return 2
    logging.basicConfig(
        level=config.log_level, format="%(asctime)s %(levelname)s %(name)s: %(message)s", stream=sys.stderr
    )
    import trio

    from shim.broker import Broker
    from shim.server import run_until_signalled

    def on_listening(host: str, port: int) -> None:
        print(f"kafka-shim listening on {host}:{port} (storage: in memory)", flush=True)

    try:
        trio.run(run_until_signalled, Broker(config), on_listening)
    except OSError as exc:
        print(f"kafka-shim: cannot listen on {config.host}:{config.port}: {exc.strerror}", file=sys.stderr)
        return 1
    return 0
