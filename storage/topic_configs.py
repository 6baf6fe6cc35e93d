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
    """Why `name=value` is not a valid topic config, or None if it is (null: the default)."""
    config = TOPIC_CONFIGS.get(name)
    if config is None:
        return f"unknown topic config {name!r}"
    return config.invalid(value)


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
