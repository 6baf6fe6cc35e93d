"""DescribeConfigs' synonyms as Kafka 3.9's ConfigHelper.configSynonyms lists them (what
`kafka-configs.sh --describe --all` prints): every level under each spelling of the broker
config (log.retention.ms, .minutes, .hours), most specific first, the leading levels of other
spellings dropped; no DEFAULT_CONFIG level for a config whose default is null; a topic config
without a broker synonym lists only its own value."""

from __future__ import annotations

from typing import Any

import pytest

from kafka_shim.protocol.messages.describe_configs import ConfigSource, ResourceType
from kafka_shim.protocol.messages.incremental_alter_configs import AlterConfigOp
from kafka_shim.shim.config import BrokerConfig, apply_kafka_configs
from kafka_shim.shim.handlers import describe_configs, incremental_alter_configs
from tests.helpers import Harness

STATIC, DEFAULT = ConfigSource.STATIC_BROKER_CONFIG, ConfigSource.DEFAULT_CONFIG
CLUSTER = ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG


def harness(server_properties: dict[str, str]) -> Harness:
    """A broker started from these server.properties keys."""
    config = apply_kafka_configs(BrokerConfig(), server_properties)
    return Harness(
        explicit=config.explicit, other_configs=config.other_configs, log_retention_ms=config.log_retention_ms
    )


def describe(h: Harness, kind: int, name: str, *keys: str) -> dict[str, Any]:
    request = {
        "resources": [
            {"resource_type": kind, "resource_name": name, "configuration_keys": list(keys) or None}
        ],
        "include_synonyms": True,
        "include_documentation": False,
    }
    result = h.call(describe_configs, 4, request).results[0]
    return {c.name: c for c in result.configs}


def set_cluster_default(h: Harness, name: str, value: str) -> None:
    request = {
        "resources": [
            {
                "resource_type": ResourceType.BROKER,
                "resource_name": "",
                "configs": [{"name": name, "config_operation": AlterConfigOp.SET, "value": value}],
            }
        ],
        "validate_only": False,
    }
    assert h.call(incremental_alter_configs, 1, request).responses[0].error_code == 0


def synonyms(config: Any) -> list[tuple[str, str | None, int]]:
    return [(s.name, s.value, s.source) for s in config.synonyms]


# (name, server.properties, cluster default of log.retention.ms, broker value, synonyms)
RETENTION: list[tuple[str, dict[str, str], str | None, str | None, list[tuple[str, str | None, int]]]] = [
    ("Kafka's null default", {}, None, None, []),
    ("hours in the file: still null, nothing listed", {"log.retention.hours": "168"}, None, None, []),
    (
        "a cluster default, then the static and default hours",
        {"log.retention.hours": "168"},
        "3600000",
        "3600000",
        [
            ("log.retention.ms", "3600000", CLUSTER),
            ("log.retention.hours", "168", STATIC),
            ("log.retention.hours", "168", DEFAULT),
        ],
    ),
    (
        "ms in the file",
        {"log.retention.ms": "5000"},
        None,
        "5000",
        [("log.retention.ms", "5000", STATIC), ("log.retention.hours", "168", DEFAULT)],
    ),
]


@pytest.mark.parametrize(
    ("props", "cluster", "value", "expected"), [c[1:] for c in RETENTION], ids=[c[0] for c in RETENTION]
)
def test_log_retention_ms_and_its_topic_synonym(
    props: dict[str, str], cluster: str | None, value: str | None, expected: list[tuple[str, str | None, int]]
) -> None:
    h = harness(props)
    if cluster is not None:
        set_cluster_default(h, "log.retention.ms", cluster)
    broker = describe(h, ResourceType.BROKER, "0", "log.retention.ms")["log.retention.ms"]
    assert (broker.value, synonyms(broker)) == (value, expected)
    assert broker.config_source == (expected[0][2] if expected else DEFAULT)
    h.broker.topics.create("t")
    topic = describe(h, ResourceType.TOPIC, "t", "retention.ms")["retention.ms"]
    assert synonyms(topic) == expected
    assert topic.value == (value or "604800000")


def test_no_default_synonym_for_a_null_default() -> None:
    configs = describe(harness({}), ResourceType.BROKER, "0")
    null_defaults = [
        c for c in configs.values() if any(s.source == DEFAULT and s.value is None for s in c.synonyms)
    ]
    assert null_defaults == []
    assert synonyms(configs["log.roll.ms"]) == [] and configs["log.roll.ms"].value is None
    assert synonyms(configs["log.segment.bytes"]) == [("log.segment.bytes", "1073741824", DEFAULT)]


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("segment.ms", []),  # log.roll.ms: null by default
        ("flush.ms", []),  # log.flush.interval.ms: null by default
        ("remote.storage.enable", []),  # no broker synonym
        ("leader.replication.throttled.replicas", []),
        ("segment.bytes", [("log.segment.bytes", "1073741824", DEFAULT)]),
    ],
)
def test_topic_configs_list_what_kafka_lists(name: str, expected: list[tuple[str, str | None, int]]) -> None:
    h = harness({})
    h.broker.topics.create("t")
    assert synonyms(describe(h, ResourceType.TOPIC, "t", name)[name]) == expected
