"""Topic-level configs (declared in protocol.settings with their types, defaults and the
broker config that supplies the default, Kafka's "synonym") resolved for one topic.

Effective values resolve as Kafka does: the topic's own setting, else the
broker's synonym, else the static default.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from enum import IntEnum

from kafka_shim.protocol.settings import TOPIC_SETTINGS, ConfigType, Setting, default_text

__all__ = [
    "TOPIC_CONFIGS",
    "BrokerValue",
    "ConfigType",
    "Origin",
    "ResolvedConfig",
    "effective_value",
    "invalid_config",
    "resolve",
]

# The topic configs this broker knows, from the one settings registry.
TOPIC_CONFIGS: dict[str, Setting] = TOPIC_SETTINGS

BrokerValue = Callable[[str], str | None]
"""A broker config's value by Kafka name, None when the broker does not have it."""


def invalid_config(name: str, value: str | None) -> str | None:
    """Why `name=value` is not a valid topic config, in Kafka's words, or None if it is (null:
    the default)."""
    config = TOPIC_CONFIGS.get(name)
    if config is None:
        return f"Unknown topic config name: {name}"
    if value is None or config.invalid(value) is None:
        return None
    return f"Invalid value {value} for configuration {name}: {_kafka_reason(config, value)}"


def _kafka_reason(config: Setting, value: str) -> str:
    """What Kafka's ConfigDef says of a value `config.invalid` refuses."""
    number: float
    try:
        if config.type is ConfigType.DOUBLE:
            number = float(value)
        elif config.type in (ConfigType.SHORT, ConfigType.INT, ConfigType.LONG):
            number = int(value.strip())
        elif config.type is ConfigType.BOOLEAN:
            return "Expected value to be either true or false"
        else:
            return f"String must be one of: {', '.join(config.choices)}"
    except ValueError:
        return f"Not a number of type {config.type.name}"
    if config.minimum is not None and number < config.minimum:
        return f"Value must be at least {_plain(config.minimum)}"
    if config.maximum is not None and number > config.maximum:
        return f"Value must be no more than {_plain(config.maximum)}"
    return f"Not a number of type {config.type.name}"  # out of the type's range


def _plain(number: float) -> str:
    return str(int(number)) if float(number).is_integer() else str(number)


def effective_value(overrides: Mapping[str, str], name: str, broker_value: BrokerValue) -> str:
    """One config's value: the topic's override, else the broker's synonym, else the default."""
    # Produce asks for three of these per partition: no synonym list is built for them.
    if name in overrides:
        return overrides[name]
    config = TOPIC_CONFIGS[name]
    if config.synonym is not None:
        broker = broker_value(config.synonym)
        if broker is not None:
            return broker
    return default_text(config) or ""


class Origin(IntEnum):
    """Where an effective value comes from, most specific first."""

    TOPIC = 1
    BROKER = 2
    DEFAULT = 3


@dataclass(frozen=True)
class ResolvedConfig:
    config: Setting
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
        # Kafka names the default after the broker config when there is one.
        levels.append((config.synonym or name, default_text(config) or "", Origin.DEFAULT))
        _, value, origin = levels[0]
        resolved.append(ResolvedConfig(config, value, origin, tuple(levels)))
    return resolved
