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

from kafka_shim.shim.listeners import (
    DEFAULT_SECURITY_PROTOCOL_MAP,
    Endpoint,
    Listener,
    ListenerError,
    resolve,
)


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


def _int_between(minimum: int, maximum: int) -> Callable[[str], int]:
    def parse(text: str) -> int:
        value = int(text.strip())
        if not minimum <= value <= maximum:
            raise ValueError(f"must be between {minimum} and {maximum}")
        return value

    return parse


def _choice(*allowed: str) -> Callable[[str], str]:
    def parse(text: str) -> str:
        if text not in allowed:
            raise ValueError(f"expected one of {', '.join(allowed)}")
        return text

    return parse


INT_MAX = 2**31 - 1

SERVER_ASSIGNORS = ("uniform", "range")
REBALANCE_PROTOCOLS = ("classic", "consumer")


def _names_list(allowed: tuple[str, ...]) -> Callable[[str], tuple[str, ...]]:
    """A comma-separated list of names out of `allowed` (Kafka also takes the assignors'
    class names: the simple ones are what the assignors call themselves)."""

    def parse(text: str) -> tuple[str, ...]:
        names = tuple(n.strip().rsplit(".", 1)[-1].removesuffix("Assignor").lower() for n in text.split(","))
        if not names or any(n not in allowed for n in names):
            raise ValueError(f"expected a list of {', '.join(allowed)}")
        return names

    return parse


# Kafka's built-in authorizer under its KRaft and its ZooKeeper-era class name; "" is no
# authorization at all, Kafka's default.
AUTHORIZER_CLASS_NAMES = (
    "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
    "kafka.security.authorizer.AclAuthorizer",
)


def _authorizer_class(text: str) -> str:
    name = text.strip()
    if name and name not in AUTHORIZER_CLASS_NAMES:
        raise ValueError(f"expected empty or one of {', '.join(AUTHORIZER_CLASS_NAMES)}")
    return name


def _principals(text: str) -> str:
    """super.users: principals `Type:name` separated by semicolons, checked as Kafka parses them."""
    for principal in text.split(";"):
        _, sep, _ = principal.strip().partition(":")
        if principal.strip() and not sep:
            raise ValueError(f"expected principalType:principalName, got {principal.strip()!r}")
    return text.strip()


def _listener_text(text: str) -> str:
    """Listener configs are checked together, once all are known (`listener_endpoints`)."""
    return text.strip()


@dataclass(frozen=True)
class BrokerConfig:
    # One PLAINTEXT listener, the shorthand used while `listeners` is None:
    host: str = "127.0.0.1"
    port: int = 9092
    advertised_host: str | None = None
    # Kafka's listener configs (shim.listeners); Kafka's default listeners is
    # PLAINTEXT://:9092 (every interface): a dev broker serves loopback unless told otherwise.
    listeners: str | None = None
    advertised_listeners: str | None = None
    listener_security_protocol_map: str = DEFAULT_SECURITY_PROTOCOL_MAP
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
    authorizer_class_name: str = ""  # "": no authorization (AUTHORIZER_CLASS_NAMES)
    super_users: str = ""
    allow_everyone_if_no_acl_found: bool = False
    # KIP-848 consumer groups (group.consumer.*): see KAFKA_DEFAULT_DIFFERS for the dev defaults.
    rebalance_protocols: tuple[str, ...] = ("classic", "consumer")
    consumer_heartbeat_interval_ms: int = 500
    consumer_min_heartbeat_interval_ms: int = 100
    consumer_max_heartbeat_interval_ms: int = 15_000
    consumer_session_timeout_ms: int = 10_000
    consumer_min_session_timeout_ms: int = 1_000
    consumer_max_session_timeout_ms: int = 60_000
    consumer_max_size: int = INT_MAX
    consumer_assignors: tuple[str, ...] = ("uniform", "range")
    consumer_migration_policy: str = "bidirectional"
    # Transactions (shim.transactions):
    transaction_max_timeout_ms: int = 900_000
    transactional_id_expiration_ms: int = 604_800_000
    transaction_id_expiration_check_interval_ms: int = 3_600_000
    transaction_state_log_num_partitions: int = 1  # Kafka's is 50: see KAFKA_DEFAULT_DIFFERS
    # The `transaction.version` feature level finalized, as Kafka 4 finalizes it for a new
    # cluster: 2 is KIP-890's protocol (epoch bump per transaction, Produce v12 adds
    # partitions); 0 and 1 are a 3.x cluster's protocol (1 also writes flexible log records).
    transaction_version: int = 2

    def effective_listeners(self) -> str:
        if self.listeners is not None:
            return self.listeners
        return str(Endpoint("PLAINTEXT", self.host, self.port))

    def effective_advertised_listeners(self) -> str | None:
        """None: the listeners themselves, as in Kafka."""
        if self.advertised_listeners is None and self.listeners is None and self.advertised_host:
            return str(Endpoint("PLAINTEXT", self.advertised_host, self.port))
        return self.advertised_listeners

    def listener_endpoints(self) -> tuple[Listener, ...]:
        """The listeners to bind, each with its advertised endpoint (ConfigError if inconsistent)."""
        if self.listeners is not None and self.advertised_host is not None:
            raise ConfigError(
                "--advertised-host is a shorthand for the one listener of --host/--port; "
                "with listeners, set advertised.listeners"
            )
        try:
            return resolve(
                self.effective_listeners(),
                self.effective_advertised_listeners(),
                self.listener_security_protocol_map,
            )
        except ListenerError as exc:
            raise ConfigError(str(exc)) from exc

    def known_value(self, name: str) -> str | None:
        """kafka_value, or None for a name this broker does not carry."""
        return self.kafka_value(name) if name in KAFKA_NAMES else None

    def kafka_value(self, name: str) -> str:
        """A config's value as DescribeConfigs reports it."""
        attr, _ = KAFKA_NAMES[name]
        value = getattr(self, attr)
        if name == "listeners":
            value = self.effective_listeners()
        elif name == "advertised.listeners":
            value = self.effective_advertised_listeners() or self.effective_listeners()
        if isinstance(value, tuple):  # a list config
            return ",".join(value)
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
    "transaction.max.timeout.ms": ("transaction_max_timeout_ms", _int_at_least(1)),
    "transactional.id.expiration.ms": ("transactional_id_expiration_ms", _int_at_least(1)),
    "transaction.remove.expired.transaction.cleanup.interval.ms": (
        "transaction_id_expiration_check_interval_ms",
        _int_at_least(1),
    ),
    "transaction.state.log.num.partitions": ("transaction_state_log_num_partitions", _int_at_least(1)),
    # Not a broker config in Kafka but a feature (kafka-features.sh / kafka-storage.sh
    # --feature transaction.version=N): here it is set like one.
    "transaction.version": ("transaction_version", _int_between(0, 2)),
    "listeners": ("listeners", _listener_text),
    "advertised.listeners": ("advertised_listeners", _listener_text),
    "listener.security.protocol.map": ("listener_security_protocol_map", _listener_text),
    "authorizer.class.name": ("authorizer_class_name", _authorizer_class),
    "super.users": ("super_users", _principals),
    "allow.everyone.if.no.acl.found": ("allow_everyone_if_no_acl_found", _bool),
    "group.coordinator.rebalance.protocols": ("rebalance_protocols", _names_list(REBALANCE_PROTOCOLS)),
    "group.consumer.heartbeat.interval.ms": ("consumer_heartbeat_interval_ms", _int_at_least(1)),
    "group.consumer.min.heartbeat.interval.ms": ("consumer_min_heartbeat_interval_ms", _int_at_least(1)),
    "group.consumer.max.heartbeat.interval.ms": ("consumer_max_heartbeat_interval_ms", _int_at_least(1)),
    "group.consumer.session.timeout.ms": ("consumer_session_timeout_ms", _int_at_least(1)),
    "group.consumer.min.session.timeout.ms": ("consumer_min_session_timeout_ms", _int_at_least(1)),
    "group.consumer.max.session.timeout.ms": ("consumer_max_session_timeout_ms", _int_at_least(1)),
    "group.consumer.max.size": ("consumer_max_size", _int_at_least(1)),
    "group.consumer.assignors": ("consumer_assignors", _names_list(SERVER_ASSIGNORS)),
    "group.consumer.migration.policy": (
        "consumer_migration_policy",
        _choice("bidirectional", "upgrade", "downgrade", "disabled"),
    ),
    "broker.id": ("node_id", _int_at_least(0)),
    "node.id": ("node_id", _int_at_least(0)),
}

# Where the embedded default differs from Apache Kafka's, and why.
KAFKA_DEFAULT_DIFFERS = {
    "group.initial.rebalance.delay.ms": (
        "3000",
        "0: a local broker should form a group as soon as its members have joined",
    ),
    "group.consumer.heartbeat.interval.ms": (
        "5000",
        "500: members learn of a rebalance at their next heartbeat, so a group converges in "
        "one or two intervals (bench/kip848_groups.py: join < 3 s, close < 1 s)",
    ),
    "group.consumer.min.heartbeat.interval.ms": (
        "5000",
        "100: also the interval members of a group that is not Stable are asked for, so that "
        "reconciliation's round trips do not each wait a full interval (a no-op with Kafka's values)",
    ),
    "group.consumer.session.timeout.ms": (
        "45000",
        "10000: a SIGKILLed member's partitions move after 10 s instead of 45 s; 20 missed "
        "heartbeats at the dev interval",
    ),
    "group.consumer.min.session.timeout.ms": ("45000", "1000: lets the timeout go below Kafka's floor"),
    "offsets.topic.num.partitions": (
        "50",
        "1: one broker gains nothing from spreading groups; the first group on disk starts in "
        "15 ms instead of 170 ms, and one active segment bounds offsets recovery (bench/offsets_recovery.py)",
    ),
    "transaction.state.log.num.partitions": (
        "50",
        "1: for the same reasons as offsets.topic.num.partitions",
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
    _check_consumer_group_bounds(result)
    result.listener_endpoints()
    return result


def _check_consumer_group_bounds(config: BrokerConfig) -> None:
    """Kafka's GroupCoordinatorConfig checks: each value within its min and max, and a
    heartbeat interval shorter than the session timeout."""
    for name, low, value, high in (
        (
            "group.consumer.heartbeat.interval.ms",
            config.consumer_min_heartbeat_interval_ms,
            config.consumer_heartbeat_interval_ms,
            config.consumer_max_heartbeat_interval_ms,
        ),
        (
            "group.consumer.session.timeout.ms",
            config.consumer_min_session_timeout_ms,
            config.consumer_session_timeout_ms,
            config.consumer_max_session_timeout_ms,
        ),
    ):
        if not low <= value <= high:
            raise ConfigError(f"{name} must be between its min ({low}) and max ({high}), got {value}")
    if config.consumer_heartbeat_interval_ms >= config.consumer_session_timeout_ms:
        raise ConfigError(
            "group.consumer.heartbeat.interval.ms must be less than group.consumer.session.timeout.ms"
        )
    if "classic" not in config.rebalance_protocols:
        raise ConfigError("group.coordinator.rebalance.protocols must contain classic")


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
