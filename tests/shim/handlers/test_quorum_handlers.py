"""DescribeQuorum, UnregisterBroker, Add/RemoveRaftVoter and ListConfigResources as a single
combined KRaft node answers them, and ApiVersions of Kafka 3.9, through the handlers."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.protocol.messages.metadata import ZERO_UUID
from kafka_shim.shim.broker import Broker
from kafka_shim.shim.config.broker_config import BrokerConfig
from kafka_shim.shim.controller.quorum import LEADER_EPOCH
from kafka_shim.shim.handlers import api_versions
from tests.helpers import Harness

DESCRIBE_QUORUM, UNREGISTER_BROKER, LIST_CONFIG_RESOURCES, ADD_VOTER, REMOVE_VOTER = 55, 64, 74, 80, 81
METADATA_PARTITION = [{"topic_name": "__cluster_metadata", "partitions": [{"partition_index": 0}]}]


@pytest.mark.parametrize("version", [0, 1, 2])
def test_describe_quorum_is_one_voter_leading_at_the_metadata_offset(version: int) -> None:
    h = Harness()
    answer = h.call(DESCRIBE_QUORUM, version, {"topics": METADATA_PARTITION})
    assert answer.error_code == 0
    (topic,) = answer.topics
    (partition,) = topic.partitions
    assert (topic.topic_name, partition.partition_index, partition.error_code) == ("__cluster_metadata", 0, 0)
    assert (partition.leader_id, partition.leader_epoch) == (0, LEADER_EPOCH)
    # the offset ApiVersions reports the features were finalized at
    assert partition.high_watermark == h.broker.features.epoch
    (voter,) = partition.current_voters
    assert (voter.replica_id, voter.log_end_offset) == (0, partition.high_watermark)
    assert partition.observers == []
    if version >= 1:
        assert voter.last_fetch_timestamp == voter.last_caught_up_timestamp == h.clock.now
    if version >= 2:
        assert voter.replica_directory_id == ZERO_UUID  # a static voter
        (node,) = answer.nodes
        assert node.node_id == 0 and [(n.host, n.port) for n in node.listeners] == [("127.0.0.1", 19092)]


def test_describe_quorum_of_another_partition_is_unknown() -> None:
    h = Harness()
    asked = [{"topic_name": "t", "partitions": [{"partition_index": 0}, {"partition_index": 1}]}]
    answer = h.call(DESCRIBE_QUORUM, 2, {"topics": asked})
    assert [p.error_code for p in answer.topics[0].partitions] == [ErrorCode.UNKNOWN_TOPIC_OR_PARTITION] * 2
    assert answer.topics[0].partitions[0].error_message == "This server does not host this topic-partition."


def test_unregister_broker() -> None:
    h = Harness()
    assert h.call(UNREGISTER_BROKER, 0, {"broker_id": 0}).error_code == ErrorCode.NONE
    unknown = h.call(UNREGISTER_BROKER, 0, {"broker_id": 7})
    assert (unknown.error_code, unknown.error_message) == (ErrorCode.BROKER_ID_NOT_REGISTERED, None)


VOTER_CHANGES = [
    ("wrong cluster id", {"cluster_id": "other"}, ErrorCode.INCONSISTENT_CLUSTER_ID,
     'The given id "other" doesn\'t match the cluster id "test-cluster"'),
    ("no directory id", {"voter_directory_id": ZERO_UUID}, ErrorCode.INVALID_REQUEST,
     "{verb} voter request didn't include a valid voter"),
    ("a static quorum", {}, ErrorCode.UNSUPPORTED_VERSION,
     "Cluster doesn't support {ing} voter because the kraft.version feature is 0"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("change", "code", "message"), [r[1:] for r in VOTER_CHANGES], ids=[r[0] for r in VOTER_CHANGES]
)
@pytest.mark.parametrize("key", [ADD_VOTER, REMOVE_VOTER])
def test_voter_changes_are_refused_as_a_static_quorum_refuses_them(
    key: int, change: dict[str, Any], code: ErrorCode, message: str
) -> None:
    request = {"cluster_id": "test-cluster", "voter_id": 1, "voter_directory_id": uuid.uuid4()} | change
    answer = Harness().call(key, 0, request | {"timeout_ms": 1000, "listeners": []})
    verb, ing = ("Add", "adding") if key == ADD_VOTER else ("Remove", "removing")
    assert (answer.error_code, answer.error_message) == (code, message.format(verb=verb, ing=ing))


def test_list_config_resources() -> None:
    h = Harness()
    h.call(
        19, 7, {"topics": [{"name": "t", "num_partitions": 1, "replication_factor": 1}], "timeout_ms": 1000}
    )
    assert h.call(LIST_CONFIG_RESOURCES, 0, {}).config_resources == []  # no client-metrics resources
    listed = h.call(LIST_CONFIG_RESOURCES, 1, {"resource_types": []}).config_resources
    assert [(r.resource_type, r.resource_name) for r in listed] == [(8, "0"), (4, "0"), (2, "t")]
    only_topics = h.call(LIST_CONFIG_RESOURCES, 1, {"resource_types": [2, 2]}).config_resources
    assert [(r.resource_type, r.resource_name) for r in only_topics] == [(2, "t")]
    assert (
        h.call(LIST_CONFIG_RESOURCES, 1, {"resource_types": [2, 64]}).error_code
        == ErrorCode.UNSUPPORTED_VERSION
    )


def advertised(h: Harness) -> dict[int, tuple[int, int]]:
    answer = api_versions.advertised_ranges(h.broker.served, h.broker.features)
    return {r["api_key"]: (r["min_version"], r["max_version"]) for r in answer}


def emulating(release: str) -> Harness:
    h = Harness()
    config = BrokerConfig(emulate=release).with_release_defaults()
    h.broker = Broker(config, clock=h.clock)
    h.broker.cluster_id, h.broker.advertised_port = "test-cluster", 19092
    return h


def test_kafka_3_9_advertises_what_it_advertises() -> None:
    """Kafka 3.9 has no group.version feature: it lists ConsumerGroupHeartbeat and -Describe
    whatever group.coordinator.rebalance.protocols says (classic by default), and refuses them."""
    h = emulating("3.9")
    ranges = advertised(h)
    expected = {38: (0, 3), 39: (0, 2), 40: (0, 2), 41: (0, 3), 55: (0, 2), 64: (0, 0), 68: (0, 0)}
    expected |= {69: (0, 0), 74: (0, 0), 80: (0, 0), 81: (0, 0)}
    assert {key: ranges.get(key) for key in expected} == expected
    described = h.call(69, 0, {"group_ids": ["g"]})
    assert [g.error_code for g in described.groups] == [ErrorCode.UNSUPPORTED_VERSION]


def test_kafka_4_hides_the_consumer_group_apis_below_group_version_1() -> None:
    h = emulating("4.2")
    assert 68 in advertised(h)
    assert h.broker.features.update({"group.version": (0, 2)}, validate_only=False) is None  # safe downgrade
    assert 68 not in advertised(h) and 69 not in advertised(h)
