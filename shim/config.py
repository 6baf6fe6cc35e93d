"""Broker configuration under Kafka's own broker config names.

Every supported key has Kafka's default except where a local development broker
wants otherwise (documented in `KAFKA_DEFAULT_DIFFERS`). Unknown keys and bad
values raise `ConfigError` with a message naming the key.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from kafka_shim.shim.limits import parse_per_ip_overrides


class ConfigError(ValueError):
    pass


def _bool(text: str) -> bool:
    lowered = text.strip().lower()
    if lowered in ("true", "false"):
        return lowered == "true"
    raise ValueError("expected true or false")


def _int_at_least(minimum: int) -> Callable[[str], int]:
    def parse(text: str) -> int:
        value = int(text.strip())
        if value < minimum:
            raise ValueError(f"must be at least {minimum}")
        return value

    return parse


def _choice(*allowed: str) -> Callable[[str], str]:
    def parse(text: str) -> str:
        if text not in allowed:
            raise ValueError(f"expected one of {', '.join(allowed)}")
        return text

    return parse


INT_MAX = 2**31 - 1
# Twice the largest frame: a maximal request always fits beside everyday traffic, and a flood
# of requests that are never finished costs at most this much (see KAFKA_DEFAULT_DIFFERS).
QUEUED_MAX_REQUEST_BYTES = 200 * 1024 * 1024


def _any_int(text: str) -> int:
    return int(text.strip())


def _per_ip_overrides(text: str) -> str:
    parse_per_ip_overrides(text)
    return text.strip()


@dataclass(frozen=True)
class BrokerConfig:
    host: str = "127.0.0.1"
    port: int = 9092
    advertised_host: str | None = None
    data_dir: Path | None = None  # None: keep everything in memory
    fsync: str = "interval"  # always | interval | never (storage.durability)
    truncate_corrupt: bool = False  # recovery may drop data after a corrupt batch
    max_request_bytes: int = 100 * 1024 * 1024
    log_level: str = "INFO"
    node_id: int = 0
    busy_poll_us: int = 500  # shim.server.FrameReader: 0 never busy-polls
    # Kafka broker configs (names in KAFKA_NAMES):
    initial_rebalance_delay_ms: int = 0
    min_session_timeout_ms: int = 6000
    max_session_timeout_ms: int = 1_800_000
    max_group_size: int = INT_MAX
    offsets_retention_minutes: int = 10080
    offsets_topic_num_partitions: int = 1  # Kafka's is 50: see KAFKA_DEFAULT_DIFFERS
    offsets_retention_check_interval_ms: int = 600_000
    num_partitions: int = 1
    auto_create_topics: bool = True
    delete_topic_enable: bool = True
    default_replication_factor: int = 1
    message_max_bytes: int = 1_048_588
    log_retention_ms: int = 7 * 24 * 3600 * 1000
    log_retention_bytes: int = -1
    log_segment_bytes: int = 1024 * 1024 * 1024
    log_roll_ms: int = 7 * 24 * 3600 * 1000
    log_cleanup_policy: str = "delete"
    log_flush_interval_ms: int = 1000
    log_retention_check_interval_ms: int = 300_000
    compression_type: str = "producer"
    # Hostile clients (shim.limits): memory for requests not yet handled, connections.
    queued_max_request_bytes: int = QUEUED_MAX_REQUEST_BYTES  # <= 0: no limit, as in Kafka
    max_connections: int = INT_MAX
    max_connections_per_ip: int = INT_MAX
    max_connections_per_ip_overrides: str = ""
    connections_max_idle_ms: int = 600_000

    @property
    def advertised(self) -> str:
        return self.advertised_host or self.host

    def known_value(self, name: str) -> str | None:
        """kafka_value, or None for a name this broker does not carry."""
        return self.kafka_value(name) if name in KAFKA_NAMES else None

    def kafka_value(self, name: str) -> str:
        """A config's value as DescribeConfigs reports it."""
        attr, _ = KAFKA_NAMES[name]
        value = getattr(self, attr)
        return str(value).lower() if isinstance(value, bool) else str(value)


# Kafka config name -> (BrokerConfig attribute, parser)
KAFKA_NAMES: dict[str, tuple[str, Callable[[str], Any]]] = {
    "group.initial.rebalance.delay.ms": ("initial_rebalance_delay_ms", _int_at_least(0)),
    "group.min.session.timeout.ms": ("min_session_timeout_ms", _int_at_least(1)),
    "group.max.session.timeout.ms": ("max_session_timeout_ms", _int_at_least(1)),
    "group.max.size": ("max_group_size", _int_at_least(1)),
    "offsets.retention.minutes": ("offsets_retention_minutes", _int_at_least(1)),
    "offsets.retention.check.interval.ms": ("offsets_retention_check_interval_ms", _int_at_least(1)),
    "offsets.topic.num.partitions": ("offsets_topic_num_partitions", _int_at_least(1)),
    "num.partitions": ("num_partitions", _int_at_least(1)),
    "auto.create.topics.enable": ("auto_create_topics", _bool),
    "delete.topic.enable": ("delete_topic_enable", _bool),
    "default.replication.factor": ("default_replication_factor", _int_at_least(1)),
    "message.max.bytes": ("message_max_bytes", _int_at_least(0)),
    "socket.request.max.bytes": ("max_request_bytes", _int_at_least(1)),
    "log.retention.ms": ("log_retention_ms", _int_at_least(-1)),
    "log.retention.bytes": ("log_retention_bytes", _int_at_least(-1)),
    "log.segment.bytes": ("log_segment_bytes", _int_at_least(14)),
    "log.roll.ms": ("log_roll_ms", _int_at_least(1)),
    "log.cleanup.policy": (
        "log_cleanup_policy",
        _choice("delete", "compact", "compact,delete", "delete,compact"),
    ),
    "log.flush.interval.ms": ("log_flush_interval_ms", _int_at_least(1)),
    "log.retention.check.interval.ms": ("log_retention_check_interval_ms", _int_at_least(1)),
    "compression.type": (
        "compression_type",
        _choice("producer", "uncompressed", "gzip", "snappy", "lz4", "zstd"),
    ),
    "queued.max.request.bytes": ("queued_max_request_bytes", _any_int),
    "max.connections": ("max_connections", _int_at_least(0)),
    "max.connections.per.ip": ("max_connections_per_ip", _int_at_least(0)),
    "max.connections.per.ip.overrides": ("max_connections_per_ip_overrides", _per_ip_overrides),
    "connections.max.idle.ms": ("connections_max_idle_ms", _int_at_least(1)),
    "broker.id": ("node_id", _int_at_least(0)),
    "node.id": ("node_id", _int_at_least(0)),
}

# Where the embedded default differs from Apache Kafka's, and why.
KAFKA_DEFAULT_DIFFERS = {
    "group.initial.rebalance.delay.ms": (
        "3000",
        "0: a local broker should form a group as soon as its members have joined",
    ),
    "offsets.topic.num.partitions": (
        "50",
        "1: one broker gains nothing from spreading groups; the first group on disk starts in "
        "15 ms instead of 170 ms, and one active segment bounds offsets recovery (bench/offsets_recovery.py)",
    ),
    "queued.max.request.bytes": (
        "-1",
        f"{QUEUED_MAX_REQUEST_BYTES}: twice socket.request.max.bytes, so a maximal request always fits "
        "while clients that announce large frames and never finish them cost at most this much memory",
    ),
}


def apply_kafka_configs(config: BrokerConfig, pairs: Mapping[str, str]) -> BrokerConfig:
    changes: dict[str, Any] = {}
    for name, text in pairs.items():
        if name not in KAFKA_NAMES:
            raise ConfigError(f"unknown config {name!r}; supported: {', '.join(sorted(KAFKA_NAMES))}")
        attr, parse = KAFKA_NAMES[name]
        try:
            changes[attr] = parse(text)
        except ValueError as exc:
            raise ConfigError(f"bad value {text!r} for {name}: {exc}") from exc
    result = replace(config, **changes)
    if result.min_session_timeout_ms > result.max_session_timeout_ms:
        raise ConfigError("group.min.session.timeout.ms exceeds group.max.session.timeout.ms")
    if 0 < result.queued_max_request_bytes < result.max_request_bytes:
        raise ConfigError("queued.max.request.bytes must be larger or equal to socket.request.max.bytes")
    return result


def parse_assignment(text: str) -> tuple[str, str]:
    name, sep, value = text.partition("=")
    if not sep or not name.strip():
        raise ConfigError(f"expected KEY=VALUE, got {text!r}")
    return name.strip(), value.strip()


def read_properties(path: Path) -> dict[str, str]:
    """A Java-style .properties file: KEY=VALUE lines, # and ! comments."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise ConfigError(f"cannot read config file {path}: {exc.strerror}") from exc
    pairs: dict[str, str] = {}
    for number, line in enumerate(lines, 1):
        stripped = line.strip()
        if not stripped or stripped[0] in "#!":
            continue
        if "=" not in stripped and ":" in stripped:
            stripped = stripped.replace(":", "=", 1)
        try:
            name, value = parse_assignment(stripped)
        except ConfigError as exc:
            raise ConfigError(f"{path}:{number}: {exc}") from exc
        pairs[name] = value
    return pairs
