"""A Produce's topic settings, resolved once per config change: a topic's new overrides or
a broker's new settings are read at the next request, the same ones are not asked again."""

from __future__ import annotations

import uuid
from dataclasses import replace

from kafka_shim.shim.config.broker_config import BrokerConfig
from kafka_shim.shim.partitions.settings import ProduceSettings, broker_values, produce_settings
from kafka_shim.storage.topics import Topic


def settings(topic: Topic, config: BrokerConfig) -> ProduceSettings:
    return produce_settings(topic, broker_values(config, config.kafka_value))


def test_new_topic_overrides_and_new_broker_settings_are_read_at_the_next_produce() -> None:
    config = BrokerConfig()
    topic = Topic("t-settings", uuid.uuid4(), [], {})
    assert settings(topic, config) == ProduceSettings(1048588, False, False)  # Kafka's defaults
    topic.configs = {"cleanup.policy": "compact,delete", "message.timestamp.type": "LogAppendTime"}
    assert settings(topic, config) == ProduceSettings(1048588, True, True)
    bigger = replace(config, message_max_bytes=2_000_000)  # the broker's synonym
    assert settings(topic, bigger) == ProduceSettings(2_000_000, True, True)
    topic.configs = {"max.message.bytes": "512"}
    assert settings(topic, bigger) == ProduceSettings(512, False, False)


def test_the_same_settings_are_asked_of_the_broker_once() -> None:
    asked: list[str] = []
    config = BrokerConfig()

    def broker_value(name: str) -> str | None:
        asked.append(name)
        return config.kafka_value(name)

    values = broker_values(config, broker_value)
    assert broker_values(config, config.kafka_value) is values
    topic = Topic("t-asked", uuid.uuid4(), [], {})
    first = produce_settings(topic, values)
    assert produce_settings(topic, values) is first
    values("message.max.bytes")
    assert sorted(asked) == sorted(set(asked))
