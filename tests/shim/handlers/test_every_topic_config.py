"""Every topic config of Kafka's (the 36 a Kafka 3.9 broker describes) is accepted by
CreateTopics, IncrementalAlterConfigs and AlterConfigs, and described back as the topic's own:
`kafka-topics.sh --config` and infrastructure-as-code tools that set any of them work."""

from __future__ import annotations

import pytest

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.protocol.kafka_config_keys import KAFKA_TOPIC_CONFIGS
from kafka_shim.protocol.messages.describe_configs import ConfigSource, ResourceType
from kafka_shim.protocol.messages.incremental_alter_configs import AlterConfigOp
from kafka_shim.shim.handlers import alter_configs, create_topics, describe_configs, incremental_alter_configs
from tests.helpers import Harness

# A valid value other than Kafka's default where there is an obvious one, else the default.
OTHER_VALUES = {
    "cleanup.policy": "compact",
    "compression.type": "zstd",
    "compression.zstd.level": "5",
    "flush.ms": "1000",
    "follower.replication.throttled.replicas": "0:1",
    "leader.replication.throttled.replicas": "*",
    "message.timestamp.type": "LogAppendTime",
    "preallocate": "true",
    "retention.ms": "3600000",
    "segment.jitter.ms": "10",
}
VALUES = {name: OTHER_VALUES.get(name, default or "") for name, _, default, _ in KAFKA_TOPIC_CONFIGS}


def described(h: Harness, topic: str) -> dict[str, tuple[str, int]]:
    request = {
        "resources": [
            {"resource_type": ResourceType.TOPIC, "resource_name": topic, "configuration_keys": None}
        ],
        "include_synonyms": False,
        "include_documentation": False,
    }
    return {
        c.name: (c.value, c.config_source) for c in h.call(describe_configs, 4, request).results[0].configs
    }


def test_create_topics_takes_every_topic_config() -> None:
    h = Harness()
    topic = {
        "name": "all-configs",
        "num_partitions": 1,
        "replication_factor": 1,
        "assignments": [],
        "configs": [{"name": name, "value": value} for name, value in VALUES.items()],
    }
    [result] = h.call(
        create_topics, 7, {"topics": [topic], "timeout_ms": 1000, "validate_only": False}
    ).topics
    assert (result.error_code, result.error_message) == (ErrorCode.NONE, None)
    assert described(h, "all-configs") == {
        n: (v, ConfigSource.DYNAMIC_TOPIC_CONFIG) for n, v in VALUES.items()
    }


@pytest.mark.parametrize("name", sorted(VALUES))
def test_each_topic_config_is_altered_both_ways(name: str) -> None:
    h = Harness()
    h.broker.topics.create("t", 1, {})
    change = {"name": name, "config_operation": AlterConfigOp.SET, "value": VALUES[name]}
    resource = {"resource_type": ResourceType.TOPIC, "resource_name": "t"}
    request = {"resources": [resource | {"configs": [change]}], "validate_only": False}
    assert h.call(incremental_alter_configs, 1, request).responses[0].error_code == ErrorCode.NONE
    legacy = {
        "resources": [resource | {"configs": [{"name": name, "value": VALUES[name]}]}],
        "validate_only": False,
    }
    assert h.call(alter_configs, 1, legacy).responses[0].error_code == ErrorCode.NONE
    assert described(h, "t")[name] == (VALUES[name], ConfigSource.DYNAMIC_TOPIC_CONFIG)
