"""The topic configs a Produce reads (max.message.bytes, cleanup.policy,
message.timestamp.type), resolved once per config change rather than three lookups through
the broker's settings on every request.

A topic's overrides are replaced, never changed in place, when its configs change
(TopicStore.alter_configs), and a broker's settings are a frozen BrokerConfig replaced when
they change: the values resolved from one pair of objects stay right while both are the
ones in use, so the cache checks their identity and resolves again when either is new."""

from __future__ import annotations

from collections.abc import Mapping
from typing import NamedTuple

from kafka_shim.storage.topic_configs import BrokerValue, effective_value
from kafka_shim.storage.topics import Topic

# Entries a process keeps at most (topics produced to, broker configs seen): past it the
# cache starts again, so created and deleted topics never grow it without bound.
MAX_ENTRIES = 4096


class ProduceSettings(NamedTuple):
    max_message_bytes: int
    compacted: bool  # cleanup.policy names compact: keyless records are refused
    log_append_time: bool  # message.timestamp.type=LogAppendTime: the broker stamps batches


class _BrokerValues:
    """One BrokerConfig's values by Kafka name, each asked of it once."""

    def __init__(self, broker_value: BrokerValue) -> None:
        self._ask = broker_value
        self._known: dict[str, str | None] = {}

    def __call__(self, name: str) -> str | None:
        try:
            return self._known[name]
        except KeyError:
            value = self._known[name] = self._ask(name)
            return value


_broker_values: dict[int, tuple[object, _BrokerValues]] = {}
_resolved: dict[str, tuple[Mapping[str, str], BrokerValue, ProduceSettings]] = {}


def broker_values(config: object, broker_value: BrokerValue) -> BrokerValue:
    """`broker_value` (the settings of `config`, a frozen BrokerConfig) remembering what it
    answered; the same callable for as long as `config` is the broker's."""
    found = _broker_values.get(id(config))
    if found is not None and found[0] is config:
        return found[1]
    if len(_broker_values) >= MAX_ENTRIES:
        _broker_values.clear()
    values = _BrokerValues(broker_value)
    _broker_values[id(config)] = (config, values)
    return values


def produce_settings(topic: Topic, broker_value: BrokerValue) -> ProduceSettings:
    """What a Produce to `topic` reads of its configs (cached while its overrides and
    `broker_value` are the same objects)."""
    found = _resolved.get(topic.name)
    if found is not None and found[0] is topic.configs and found[1] is broker_value:
        return found[2]
    settings = ProduceSettings(
        int(effective_value(topic.configs, "max.message.bytes", broker_value)),
        "compact" in effective_value(topic.configs, "cleanup.policy", broker_value),
        effective_value(topic.configs, "message.timestamp.type", broker_value) == "LogAppendTime",
    )
    if len(_resolved) >= MAX_ENTRIES:
        _resolved.clear()
    _resolved[topic.name] = (topic.configs, broker_value, settings)
    return settings
