"""The topic-level configs this broker knows: their types, defaults and the
broker config that supplies the default (Kafka's "synonym").

Effective values resolve as Kafka does: the topic's own setting, else the
broker's synonym, else the static default.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from enum import IntEnum


class ConfigType(IntEnum):
    """DescribeConfigs v3+ ConfigType values."""

    BOOLEAN = 1
    STRING = 2
    INT = 3
    SHORT = 4
    LONG = 5
    DOUBLE = 6
    LIST = 7


@dataclass(frozen=True)
class TopicConfig:
    name: str
    type: ConfigType
    default: str
    synonym: str | None = None  # the broker config that sets the default
    choices: tuple[str, ...] = ()
    minimum: int | None = None  # Kafka's lower bound for numeric configs


LONG_MAX = str(2**63 - 1)


TOPIC_CONFIGS: dict[str, TopicConfig] = {
    c.name: c
    for c in [
        TopicConfig(
            "cleanup.policy",
            ConfigType.LIST,
            "delete",
            "log.cleanup.policy",
            ("delete", "compact", "compact,delete", "delete,compact"),
        ),
        TopicConfig(
            "compression.type",
            ConfigType.STRING,
            "producer",
            "compression.type",
            ("producer", "uncompressed", "gzip", "snappy", "lz4", "zstd"),
        ),
        TopicConfig("delete.retention.ms", ConfigType.LONG, "86400000", minimum=0),
        TopicConfig("index.interval.bytes", ConfigType.INT, "4096", minimum=0),
        TopicConfig("max.compaction.lag.ms", ConfigType.LONG, LONG_MAX, minimum=1),
        TopicConfig("max.message.bytes", ConfigType.INT, "1048588", "message.max.bytes", minimum=0),
        TopicConfig(
            "message.timestamp.type", ConfigType.STRING, "CreateTime", choices=("CreateTime", "LogAppendTime")
        ),
        TopicConfig("min.cleanable.dirty.ratio", ConfigType.DOUBLE, "0.5"),
        TopicConfig("min.compaction.lag.ms", ConfigType.LONG, "0", minimum=0),
        TopicConfig("min.insync.replicas", ConfigType.INT, "1", minimum=1),
        TopicConfig("retention.bytes", ConfigType.LONG, "-1", "log.retention.bytes"),
        TopicConfig("retention.ms", ConfigType.LONG, "604800000", "log.retention.ms", minimum=-1),
        TopicConfig("segment.bytes", ConfigType.INT, "1073741824", "log.segment.bytes", minimum=14),
        TopicConfig("segment.ms", ConfigType.LONG, "604800000", "log.roll.ms", minimum=1),
        TopicConfig("unclean.leader.election.enable", ConfigType.BOOLEAN, "false"),
    ]
}

_INTEGER_BOUNDS = {ConfigType.SHORT: 2**15, ConfigType.INT: 2**31, ConfigType.LONG: 2**63}

BrokerValue = Callable[[str], str | None]
"""A broker config's value by Kafka name, None when the broker does not have it."""


def invalid_config(name: str, value: str | None) -> str | None:
    """Why `name=value` is not a valid topic config, or None if it is."""
    config = TOPIC_CONFIGS.get(name)
    if config is None:
        return f"unknown topic config {name!r}"
    if value is None:
        return None  # null: use the default
    if config.choices and value not in config.choices:
        return f"{name} must be one of {', '.join(config.choices)}"
    bound = _INTEGER_BOUNDS.get(config.type)
    if bound is not None:
        try:
            number = int(value)
        except ValueError:
            return f"{name} must be an integer, got {value!r}"
        if not -bound <= number < bound:
            return f"{name}={value} is out of range for a {config.type.name.lower()}"
        if config.minimum is not None and number < config.minimum:
            return f"{name} must be at least {config.minimum}, got {value}"
    if config.type is ConfigType.DOUBLE:
        try:
            float(value)
        except ValueError:
            return f"{name} must be a number, got {value!r}"
    if config.type is ConfigType.BOOLEAN and value.lower() not in ("true", "false"):
        return f"{name} must be true or false"
    return None


def effective_value(overrides: Mapping[str, str], name: str, broker_value: BrokerValue) -> str:
    """One config's value: the topic's override, else the broker's synonym, else the default."""
    if name in overrides:
        return overrides[name]
    return resolve({}, broker_value, [name])[0].value


class Origin(IntEnum):
    """Where an effective value comes from, most specific first."""

    TOPIC = 1
    BROKER = 2
    DEFAULT = 3


@dataclass(frozen=True)
class ResolvedConfig:
    config: TopicConfig
    value: str
    origin: Origin
    # Every level that sets the config, most specific first (Kafka's synonyms).
    synonyms: tuple[tuple[str, str, Origin], ...]


def resolve(
    overrides: Mapping[str, str], broker_value: BrokerValue, names: Iterable[str] | None = None
) -> list[ResolvedConfig]:
    """The effective topic configs (all known ones, or just `names` that exist)."""
    chosen = TOPIC_CONFIGS.keys() if names is None else [n for n in names if n in TOPIC_CONFIGS]
    resolved = []
    for name in chosen:
        config = TOPIC_CONFIGS[name]
        levels: list[tuple[str, str, Origin]] = []
        if name in overrides:
            levels.append((name, overrides[name], Origin.TOPIC))
        broker = broker_value(config.synonym) if config.synonym is not None else None
        if config.synonym is not None and broker is not None:
            levels.append((config.synonym, broker, Origin.BROKER))
        levels.append((name, config.default, Origin.DEFAULT))
        _, value, origin = levels[0]
        resolved.append(ResolvedConfig(config, value, origin, tuple(levels)))
    return resolved
