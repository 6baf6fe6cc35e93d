"""DescribeConfigs' synonyms as Kafka 3.9's ConfigHelper.configSynonyms lists them (what
`kafka-configs.sh --describe --all` prints): every level under each spelling of the broker
config (log.retention.ms, .minutes, .hours), most specific first, the leading levels of other
spellings dropped; no DEFAULT_CONFIG level for a config whose default is null; a topic config
without a broker synonym lists only its own value; the emulated release's defaults."""

from __future__ import annotations

from dataclasses import fields, replace
from pathlib import Path
from typing import Any

import pytest

from kafka_shim.protocol.messages.describe_configs import ConfigSource, ResourceType
from kafka_shim.protocol.messages.incremental_alter_configs import AlterConfigOp
from kafka_shim.shim.config.broker_config import BrokerConfig, apply_kafka_configs, read_properties
from kafka_shim.shim.coordinator.consumer.config import ConsumerGroupConfig
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


KAFKA_SERVER_PROPERTIES = Path(__file__).parents[1] / "data" / "kafka-kraft-server.properties"
ASSIGNOR_CLASS_NAMES = (
    "org.apache.kafka.coordinator.group.assignor.UniformAssignor,"
    "org.apache.kafka.coordinator.group.assignor.RangeAssignor"
)


def test_kafka_3_9_from_its_own_server_properties() -> None:
    """`--emulate 3.9` configured from Kafka's shipped KRaft server.properties describes what a
    single-node combined Kafka 3.9 broker describes: its listeners with the CONTROLLER one,
    node.id over Kafka's -1 default, 3.9's defaults of the rebalance protocols and assignors."""
    props = read_properties(KAFKA_SERVER_PROPERTIES)
    props.pop("log.dirs")
    config = apply_kafka_configs(replace(BrokerConfig(), emulate="3.9"), props).with_release_defaults()
    h = Harness(**{f.name: getattr(config, f.name) for f in fields(config)})
    configs = describe(h, ResourceType.BROKER, "1")
    described = {
        name: (configs[name].value, synonyms(configs[name]))
        for name in (
            "listeners",
            "node.id",
            "group.coordinator.rebalance.protocols",
            "group.consumer.assignors",
        )
    }
    assert described == {
        "listeners": (
            "PLAINTEXT://:9092,CONTROLLER://:9093",
            [("listeners", "PLAINTEXT://:9092,CONTROLLER://:9093", STATIC)],
        ),
        "node.id": ("1", [("node.id", "1", STATIC), ("node.id", "-1", DEFAULT)]),
        "group.coordinator.rebalance.protocols": (
            "classic",
            [("group.coordinator.rebalance.protocols", "classic", DEFAULT)],
        ),
        "group.consumer.assignors": (
            ASSIGNOR_CLASS_NAMES,
            [("group.consumer.assignors", ASSIGNOR_CLASS_NAMES, DEFAULT)],
        ),
    }
    # The class names are the assignors the coordinator runs, the first the default.
    assert ConsumerGroupConfig.from_broker(config).assignors == ("uniform", "range")
    assert [listener.name for listener in config.listener_endpoints()] == ["PLAINTEXT"]  # bound
