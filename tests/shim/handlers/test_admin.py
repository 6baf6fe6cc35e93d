"""Metadata, topic administration, DescribeConfigs and DescribeCluster handlers."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.protocol.messages.describe_configs import ConfigSource, ResourceType
from kafka_shim.protocol.messages.metadata import AUTHORIZED_OPERATIONS_OMITTED
from kafka_shim.shim.handlers import (
    create_partitions,
    create_topics,
    delete_topics,
    describe_cluster,
    describe_configs,
)
from kafka_shim.shim.handlers import metadata as metadata_handler
from tests.helpers import Harness

# Without an authorizer, all a resource supports (Kafka's AclEntry.supportedOperations), as
# bits by AclOperation code: READ 3, WRITE 4, CREATE 5, DELETE 6, ALTER 7, DESCRIBE 8,
# CLUSTER_ACTION 9, DESCRIBE_CONFIGS 10, ALTER_CONFIGS 11, IDEMPOTENT_WRITE 12.
TOPIC_OPERATIONS = sum(1 << code for code in (3, 4, 5, 6, 7, 8, 10, 11))
CLUSTER_OPERATIONS = sum(1 << code for code in (5, 7, 8, 9, 10, 11, 12))


def metadata(h: Harness, version: int, topics: list[dict[str, Any]] | None, **fields: Any) -> Any:
    response = h.call(metadata_handler, version, {"topics": topics} | fields)
    assert response is not None
    return response


@pytest.mark.parametrize("version", range(0, 13))
def test_metadata_describes_this_broker_in_every_version(version: int) -> None:
    h = Harness(num_partitions=2)
    topic = h.broker.topics.create("orders")
    response = metadata(h, version, [] if version == 0 else None)
    assert [(b.node_id, b.host, b.port) for b in response.brokers] == [(0, "127.0.0.1", 19092)]
    if version >= 1:
        assert response.controller_id == 0
    if version >= 2:
        assert response.cluster_id == "test-cluster"
    [described] = response.topics
    assert (described.error_code, described.name) == (ErrorCode.NONE, "orders")
    if version >= 10:
        assert described.topic_id == topic.topic_id
    assert [(p.partition_index, p.leader_id, p.replica_nodes, p.isr_nodes) for p in described.partitions] == [
        (0, 0, [0], [0]),
        (1, 0, [0], [0]),
    ]


def test_metadata_empty_list_means_no_topics_from_v1() -> None:
    h = Harness()
    h.broker.topics.create("orders")
    assert metadata(h, 1, []).topics == []


def test_metadata_auto_creates_when_allowed() -> None:
    h = Harness(num_partitions=3)
    response = metadata(h, 9, [{"name": "fresh"}])
    assert response.topics[0].error_code == ErrorCode.NONE and len(response.topics[0].partitions) == 3
    refused = metadata(h, 9, [{"name": "other"}], allow_auto_topic_creation=False)
    assert refused.topics[0].error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    off = Harness(auto_create_topics=False)
    assert metadata(off, 9, [{"name": "fresh"}]).topics[0].error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION


def test_metadata_invalid_name_and_lookup_by_id() -> None:
    h = Harness()
    assert metadata(h, 9, [{"name": "bad name"}]).topics[0].error_code == ErrorCode.INVALID_TOPIC_EXCEPTION
    topic = h.broker.topics.create("orders")
    by_id = metadata(h, 12, [{"name": None, "topic_id": topic.topic_id}]).topics[0]
    assert (by_id.error_code, by_id.name) == (ErrorCode.NONE, "orders")
    unknown = metadata(h, 12, [{"name": None, "topic_id": uuid.uuid4()}]).topics[0]
    assert unknown.error_code == ErrorCode.UNKNOWN_TOPIC_ID


def test_metadata_authorized_operations_on_request() -> None:
    h = Harness()
    h.broker.topics.create("orders")
    assert metadata(h, 9, None).topics[0].topic_authorized_operations == AUTHORIZED_OPERATIONS_OMITTED
    asked = metadata(h, 9, None, include_topic_authorized_operations=True)
    assert asked.topics[0].topic_authorized_operations == TOPIC_OPERATIONS


# --- CreateTopics ------------------------------------------------------------


def new_topic(name: str, partitions: int = -1, replication: int = -1, **extra: Any) -> dict[str, Any]:
    return {"name": name, "num_partitions": partitions, "replication_factor": replication} | extra


def create(h: Harness, version: int, *topics: dict[str, Any], validate_only: bool = False) -> list[Any]:
    response = h.call(create_topics, version, {"topics": list(topics), "validate_only": validate_only})
    assert response is not None
    return list(response.topics)


@pytest.mark.parametrize("version", range(2, 8))
def test_create_topics_every_version(version: int) -> None:
    h = Harness(num_partitions=4)
    [result] = create(h, version, new_topic("orders", configs=[{"name": "retention.ms", "value": "1000"}]))
    topic = h.broker.topics.get("orders")
    assert result.error_code == ErrorCode.NONE and topic is not None
    assert len(topic.partitions) == 4 and topic.configs == {"retention.ms": "1000"}
    if version >= 5:
        assert (result.num_partitions, result.replication_factor) == (4, 1)
        retention = {c.name: c for c in result.configs}["retention.ms"]
        assert (retention.value, retention.config_source) == ("1000", ConfigSource.DYNAMIC_TOPIC_CONFIG)
    if version >= 7:
        assert result.topic_id == topic.topic_id


@pytest.mark.parametrize(
    ("topic", "code"),
    [
        (new_topic("t", 1, 3), ErrorCode.INVALID_REPLICATION_FACTOR),
        (new_topic("bad name"), ErrorCode.INVALID_TOPIC_EXCEPTION),
        (new_topic("t", 0), ErrorCode.INVALID_PARTITIONS),
        (new_topic("t", configs=[{"name": "bogus", "value": "1"}]), ErrorCode.INVALID_CONFIG),
        (
            new_topic("t", assignments=[{"partition_index": 0, "broker_ids": [5]}]),
            ErrorCode.INVALID_REPLICA_ASSIGNMENT,
        ),
    ],
)
def test_create_topics_refusals(topic: dict[str, Any], code: ErrorCode) -> None:
    h = Harness()
    [result] = create(h, 5, topic)
    assert result.error_code == code and result.error_message
    assert len(h.broker.topics) == 0


def test_create_topics_existing_duplicate_and_validate_only() -> None:
    h = Harness()
    h.broker.topics.create("t")
    assert create(h, 5, new_topic("t"))[0].error_code == ErrorCode.TOPIC_ALREADY_EXISTS
    twice = create(h, 5, new_topic("u"), new_topic("u"))  # one answer per name, as Kafka's controller
    assert [(r.name, r.error_code) for r in twice] == [("u", ErrorCode.INVALID_REQUEST)]
    assert h.broker.topics.get("u") is None
    [checked] = create(h, 5, new_topic("v", 3, 1), validate_only=True)
    assert checked.error_code == ErrorCode.NONE and checked.num_partitions == 3
    assert h.broker.topics.get("v") is None


def test_create_topics_with_manual_assignment() -> None:
    h = Harness()
    assignments = [{"partition_index": i, "broker_ids": [0]} for i in range(2)]
    assert create(h, 5, new_topic("t", assignments=assignments))[0].error_code == ErrorCode.NONE
    assert len(h.broker.topics.get("t").partitions) == 2  # type: ignore[union-attr]


# --- DeleteTopics / CreatePartitions -------------------------------------------


@pytest.mark.parametrize("version", range(1, 6))
def test_delete_topics_by_name(version: int) -> None:
    h = Harness()
    h.broker.topics.create("t")
    response = h.call(delete_topics, version, {"topic_names": ["t", "nope"], "timeout_ms": 1000})
    assert response is not None
    assert [(r.name, r.error_code) for r in response.responses] == [
        ("t", ErrorCode.NONE),
        ("nope", ErrorCode.UNKNOWN_TOPIC_OR_PARTITION),
    ]
    assert h.broker.topics.get("t") is None


def test_delete_topics_by_id_in_v6() -> None:
    h = Harness()
    topic = h.broker.topics.create("t")
    request = {
        "topics": [{"name": None, "topic_id": topic.topic_id}, {"name": None, "topic_id": uuid.uuid4()}]
    }
    response = h.call(delete_topics, 6, request | {"timeout_ms": 1000})
    assert response is not None
    assert [(r.name, r.error_code) for r in response.responses] == [
        ("t", ErrorCode.NONE),
        (None, ErrorCode.UNKNOWN_TOPIC_ID),
    ]


def test_delete_topics_disabled() -> None:
    h = Harness(delete_topic_enable=False)
    h.broker.topics.create("t")
    response = h.call(delete_topics, 4, {"topic_names": ["t"], "timeout_ms": 1000})
    assert response is not None and response.responses[0].error_code == ErrorCode.TOPIC_DELETION_DISABLED
    assert h.broker.topics.get("t") is not None


@pytest.mark.parametrize("version", range(0, 4))
def test_create_partitions(version: int) -> None:
    h = Harness()
    h.broker.topics.create("t", 1)
    request = {
        "topics": [
            {"name": "t", "count": 3, "assignments": None},
            {"name": "nope", "count": 3, "assignments": None},
        ],
        "timeout_ms": 1000,
        "validate_only": False,
    }
    response = h.call(create_partitions, version, request)
    assert response is not None
    assert [r.error_code for r in response.results] == [ErrorCode.NONE, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION]
    assert len(h.broker.topics.get("t").partitions) == 3  # type: ignore[union-attr]
    shrink = h.call(create_partitions, version, request | {"topics": [{"name": "t", "count": 2}]})
    assert shrink is not None and shrink.results[0].error_code == ErrorCode.INVALID_PARTITIONS


def test_create_partitions_validate_only() -> None:
    h = Harness()
    h.broker.topics.create("t", 1)
    # Clients send null assignments to let the broker place the new partitions.
    request = {
        "topics": [{"name": "t", "count": 5, "assignments": None}],
        "timeout_ms": 1,
        "validate_only": True,
    }
    response = h.call(create_partitions, 1, request)
    assert response is not None and response.results[0].error_code == ErrorCode.NONE
    assert len(h.broker.topics.get("t").partitions) == 1  # type: ignore[union-attr]


# --- DescribeConfigs / DescribeCluster -------------------------------------------


def describe(
    h: Harness, version: int, *resources: tuple[int, str, list[str] | None], **fields: Any
) -> list[Any]:
    request = {
        "resources": [
            {"resource_type": kind, "resource_name": name, "configuration_keys": keys}
            for kind, name, keys in resources
        ]
    }
    response = h.call(describe_configs, version, request | fields)
    assert response is not None
    return list(response.results)


@pytest.mark.parametrize("version", range(0, 5))
def test_describe_topic_configs(version: int) -> None:
    h = Harness(log_retention_ms=5000)
    h.broker.topics.create("t", configs={"cleanup.policy": "compact"})
    [result] = describe(h, version, (ResourceType.TOPIC, "t", None), include_synonyms=version >= 1)
    configs = {c.name: c for c in result.configs}
    assert configs["cleanup.policy"].value == "compact"
    assert configs["retention.ms"].value == "5000"  # the broker's log.retention.ms
    if version == 0:
        assert not configs["cleanup.policy"].is_default and configs["retention.ms"].is_default
    else:
        assert configs["retention.ms"].config_source == ConfigSource.STATIC_BROKER_CONFIG
        # As Kafka: the broker synonyms under each spelling; log.retention.ms's default is
        # null, the 7 days come from log.retention.hours.
        assert [(s.name, s.value, s.source) for s in configs["retention.ms"].synonyms] == [
            ("log.retention.ms", "5000", ConfigSource.STATIC_BROKER_CONFIG),
            ("log.retention.hours", "168", ConfigSource.DEFAULT_CONFIG),
        ]


def test_tombstone_retention_defaults_to_the_brokers_log_cleaner_setting() -> None:
    """delete.retention.ms, unset on the topic, is log.cleaner.delete.retention.ms (Kafka's
    synonym): what the topic's log compacts by, and what DescribeConfigs names as its source."""
    h = Harness(log_cleaner_delete_retention_ms=60_000)
    h.broker.topics.create("t", configs={"cleanup.policy": "compact"})
    assert h.broker.topics.log_config({"cleanup.policy": "compact"}).delete_retention_ms == 60_000
    assert h.broker.topics.log_config({"delete.retention.ms": "5"}).delete_retention_ms == 5
    [result] = describe(h, 4, (ResourceType.TOPIC, "t", ["delete.retention.ms"]), include_synonyms=True)
    [config] = result.configs
    assert (config.value, config.config_source) == ("60000", ConfigSource.STATIC_BROKER_CONFIG)
    assert [(s.name, s.value, s.source) for s in config.synonyms] == [
        ("log.cleaner.delete.retention.ms", "60000", ConfigSource.STATIC_BROKER_CONFIG),
        ("log.cleaner.delete.retention.ms", "86400000", ConfigSource.DEFAULT_CONFIG),
    ]


def test_describe_configs_filters_and_errors() -> None:
    h = Harness()
    h.broker.topics.create("t")
    topic, missing, broker, wrong_broker, logger = describe(
        h,
        4,
        (ResourceType.TOPIC, "t", ["retention.ms"]),
        (ResourceType.TOPIC, "nope", None),
        (ResourceType.BROKER, "0", ["num.partitions", "auto.create.topics.enable"]),
        (ResourceType.BROKER, "7", None),
        (ResourceType.BROKER_LOGGER, "0", None),
    )
    assert [c.name for c in topic.configs] == ["retention.ms"]
    assert missing.error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    assert {c.name: c.value for c in broker.configs} == {
        "num.partitions": "1",
        "auto.create.topics.enable": "true",
    }
    assert wrong_broker.error_code == ErrorCode.INVALID_REQUEST
    assert logger.error_code == ErrorCode.NONE and "root" in [c.name for c in logger.configs]  # its loggers


@pytest.mark.parametrize("version", range(0, 2))
def test_describe_cluster(version: int) -> None:
    h = Harness()
    response = h.call(describe_cluster, version, {"include_cluster_authorized_operations": True})
    assert response is not None
    assert (response.error_code, response.cluster_id, response.controller_id) == (
        ErrorCode.NONE,
        "test-cluster",
        0,
    )
    assert [(b.broker_id, b.host, b.port) for b in response.brokers] == [(0, "127.0.0.1", 19092)]
    assert response.cluster_authorized_operations == CLUSTER_OPERATIONS


@pytest.mark.parametrize(
    ("endpoint_type", "code", "message"),
    [  # Kafka 3.9's computeDescribeClusterResponse, as the corpus (describe_cluster.v1) recorded
        (
            2,
            ErrorCode.MISMATCHED_ENDPOINT_TYPE,
            "The request was sent to an endpoint of type BROKER, but we wanted an endpoint of type "
            "CONTROLLER",
        ),
        (9, ErrorCode.UNSUPPORTED_ENDPOINT_TYPE, "Unsupported endpoint type 9"),
    ],
)
def test_describe_cluster_other_endpoint_types(endpoint_type: int, code: ErrorCode, message: str) -> None:
    response = Harness().call(describe_cluster, 1, {"endpoint_type": endpoint_type})
    assert (response.error_code, response.error_message, response.endpoint_type) == (code, message, 1)
    assert (response.cluster_id, response.controller_id) == ("", -1)


@pytest.mark.parametrize("version", [10, 11])
def test_metadata_by_id_needs_v12(version: int) -> None:
    topic = Harness().broker.topics.create("orders")
    h = Harness()
    response = metadata(h, version, [{"name": None, "topic_id": topic.topic_id}])
    assert response.topics[0].error_code == ErrorCode.INVALID_REQUEST


def test_metadata_v12_looks_up_a_topic_id_sent_beside_an_empty_name() -> None:
    # The Java client's broker-side regex subscription asks this way; Kafka answers by id.
    h = Harness()
    topic = h.broker.topics.create("orders")
    request = {"topics": [{"topic_id": topic.topic_id, "name": ""}], "allow_auto_topic_creation": False}
    answered = h.call(3, 12, request).topics[0]
    assert (answered.error_code, answered.name, answered.topic_id) == (0, "orders", topic.topic_id)
