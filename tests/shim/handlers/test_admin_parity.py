"""AlterConfigs (legacy), DescribeLogDirs, OffsetForLeaderEpoch, DescribeTopicPartitions,
ElectLeaders, Alter/ListPartitionReassignments and AlterReplicaLogDirs through the wire
schemas, with the answers a single Kafka 3.9 broker gives."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.protocol.messages.describe_configs import ResourceType as ConfigResource
from kafka_shim.protocol.messages.metadata import ZERO_UUID
from kafka_shim.protocol.settings.security import STANDARD_AUTHORIZER
from kafka_shim.shim.handlers import (
    alter_configs,
    alter_partition_reassignments,
    alter_replica_log_dirs,
    create_acls,
    describe_log_dirs,
    describe_topic_partitions,
    elect_leaders,
    list_partition_reassignments,
    offset_for_leader_epoch,
)
from kafka_shim.shim.security.authorizer import AclOperation, PatternType, PermissionType, ResourceType
from tests.batches import batch
from tests.helpers import Harness

ALICE, ADMIN = "User:alice", "User:admin"
TAF, CAF = ErrorCode.TOPIC_AUTHORIZATION_FAILED, ErrorCode.CLUSTER_AUTHORIZATION_FAILED


@pytest.fixture
def on_disk(tmp_path: Path) -> Iterator[Harness]:
    h = Harness(data_dir=tmp_path / "data")
    yield h
    h.broker.close()


def secured() -> Harness:
    """alice may only DESCRIBE topic A; admin is a super user."""
    h = Harness(authorizer_class_name=STANDARD_AUTHORIZER, super_users=ADMIN)
    acl = {
        "resource_type": ResourceType.TOPIC,
        "resource_name": "A",
        "resource_pattern_type": PatternType.LITERAL,
        "principal": ALICE,
        "host": "*",
        "operation": AclOperation.DESCRIBE,
        "permission_type": PermissionType.ALLOW,
    }
    assert h.call(create_acls, 3, {"creations": [acl]}, h.context(3, ADMIN)).results[0].error_code == 0
    for name in ("A", "B"):
        h.broker.topics.create(name)
    return h


def call(
    h: Harness, handler: Any, version: int, request: dict[str, Any], principal: str | None = None
) -> Any:
    ctx = h.context(version, principal) if principal is not None else None
    response = h.call(handler, version, request, ctx)
    assert response is not None
    return response


def appended(h: Harness, topic: str, partition: int, *values: bytes) -> None:
    log = h.broker.topics.partition(topic, partition)
    assert log is not None
    for value in values:
        log.append(batch(value))


# --- AlterConfigs (legacy) ------------------------------------------------------------------


def overrides(h: Harness, name: str) -> dict[str, str]:
    topic = h.broker.topics.get(name)
    assert topic is not None
    return topic.configs


def legacy(name: str, configs: dict[str, str | None], kind: int = ConfigResource.TOPIC) -> dict[str, Any]:
    return {
        "resource_type": kind,
        "resource_name": name,
        "configs": [{"name": k, "value": v} for k, v in configs.items()],
    }


def alter(h: Harness, version: int, *resources: dict[str, Any], validate_only: bool = False) -> list[Any]:
    request = {"resources": list(resources), "validate_only": validate_only}
    return [(r.error_code, r.resource_name) for r in call(h, alter_configs, version, request).responses]


@pytest.mark.parametrize("version", range(3))
def test_legacy_alter_configs_replaces_the_whole_set_of_overrides(version: int) -> None:
    h = Harness()
    h.broker.topics.create("t", 1, {"retention.ms": "5000", "cleanup.policy": "compact"})
    assert alter(h, version, legacy("t", {"retention.ms": "7000"}), validate_only=True) == [(0, "t")]
    assert overrides(h, "t") == {"retention.ms": "5000", "cleanup.policy": "compact"}
    assert alter(h, version, legacy("t", {"retention.ms": "7000"})) == [(0, "t")]
    assert overrides(h, "t") == {"retention.ms": "7000"}
    assert alter(h, version, legacy("t", {})) == [(0, "t")]
    assert overrides(h, "t") == {}


def test_legacy_alter_configs_refusals_as_kafka_answers_them() -> None:
    h = Harness()
    h.broker.topics.create("t", 1, {"retention.ms": "5000"})
    request = {
        "resources": [
            legacy("t", {"no.such.config": "1"}),
            legacy("u", {"retention.ms": "1"}),
            legacy("t2", {"segment.bytes": "-3"}),
            legacy("d", {"retention.ms": None}),
            {
                "resource_type": ConfigResource.TOPIC,
                "resource_name": "k",
                "configs": [{"name": "retention.ms", "value": "1"}, {"name": "retention.ms", "value": "2"}],
            },
            legacy("0", {"log.retention.ms": "1"}, kind=ConfigResource.BROKER),
            legacy("0", {"kafka": "DEBUG"}, kind=ConfigResource.BROKER_LOGGER),
            legacy("twice", {}),
            legacy("twice", {}),
        ],
        "validate_only": False,
    }
    h.broker.topics.create("t2")
    answers = [(r.error_code, r.error_message) for r in call(h, alter_configs, 2, request).responses]
    assert [code for code, _ in answers] == [
        ErrorCode.INVALID_CONFIG,
        ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
        ErrorCode.INVALID_CONFIG,
        ErrorCode.INVALID_REQUEST,
        ErrorCode.INVALID_REQUEST,
        ErrorCode.NONE,  # a dynamic broker config, as in Kafka
        ErrorCode.INVALID_REQUEST,
        ErrorCode.INVALID_REQUEST,
        ErrorCode.INVALID_REQUEST,
    ]
    assert h.broker.config.log_retention_ms == 1
    assert answers[3][1] == "Null value not supported for : retention.ms"
    assert answers[6][1] == "Unknown resource type 8"
    assert answers[7][1] == answers[8][1] == "Each resource must appear at most once."
    assert overrides(h, "t") == {"retention.ms": "5000"}


def test_legacy_alter_configs_needs_alter_configs_on_the_topic() -> None:
    h = secured()
    assert alter_as(h, ALICE) == [(TAF, "A")]
    assert alter_as(h, ADMIN) == [(0, "A")]


def alter_as(h: Harness, principal: str) -> list[Any]:
    request = {"resources": [legacy("A", {"retention.ms": "1000"})], "validate_only": False}
    return [(r.error_code, r.resource_name) for r in call(h, alter_configs, 1, request, principal).responses]


# --- DescribeLogDirs ------------------------------------------------------------------------


def on_disk_size(h: Harness, topic: str, partition: int) -> int:
    storage = h.broker.storage
    assert storage is not None
    directory = storage.data_dir.partition_path(topic, partition)
    return sum(path.stat().st_size for path in directory.glob("*.log"))


@pytest.mark.parametrize("version", range(5))
def test_describe_log_dirs_reports_each_partitions_bytes_on_disk(on_disk: Harness, version: int) -> None:
    h = on_disk
    h.broker.topics.create("t", 2)
    appended(h, "t", 0, b"x" * 100, b"y" * 10)
    appended(h, "t", 1, b"z")
    response = call(h, describe_log_dirs, version, {"topics": None})
    [result] = response.results
    storage = h.broker.storage
    assert storage is not None
    assert (result.error_code, result.log_dir) == (0, str(storage.data_dir.path.absolute()))
    sizes = {
        (t.name, p.partition_index): (p.partition_size, p.offset_lag, p.is_future_key)
        for t in result.topics
        for p in t.partitions
    }
    assert sizes[("t", 0)] == (on_disk_size(h, "t", 0), 0, False)
    assert sizes[("t", 1)] == (on_disk_size(h, "t", 1), 0, False)
    assert sizes[("t", 0)][0] > sizes[("t", 1)][0] > 0
    if version >= 4:
        assert result.total_bytes >= result.usable_bytes > 0
    else:
        assert result.total_bytes == result.usable_bytes == -1


def test_describe_log_dirs_counts_every_segment(on_disk: Harness) -> None:
    h = on_disk
    h.broker.topics.create("t", 1, {"segment.bytes": "1024"})
    appended(h, "t", 0, *[b"x" * 300] * 12)
    storage = h.broker.storage
    assert storage is not None
    segments = list(storage.data_dir.partition_path("t", 0).glob("*.log"))
    assert len(segments) > 2
    [result] = call(h, describe_log_dirs, 4, {"topics": [{"topic": "t", "partitions": [0]}]}).results
    assert result.topics[0].partitions[0].partition_size == sum(p.stat().st_size for p in segments)


def test_describe_log_dirs_of_named_partitions_only(on_disk: Harness) -> None:
    h = on_disk
    h.broker.topics.create("t", 2)
    request = {"topics": [{"topic": "t", "partitions": [1, 7]}, {"topic": "missing", "partitions": [0]}]}
    [result] = call(h, describe_log_dirs, 4, request).results
    assert [(t.name, [p.partition_index for p in t.partitions]) for t in result.topics] == [("t", [1])]


def test_describe_log_dirs_in_memory_describes_one_directory() -> None:
    """Kafka always has a log directory: --memory describes one, with the bytes each partition
    holds and the machine's memory as the volume (the corpus' describe_log_dirs cases)."""
    h = Harness()
    h.broker.topics.create("t", 2)
    data = batch(b"v1", b"v2")
    appended_log = h.broker.topics.partition("t", 0)
    assert appended_log is not None
    appended_log.append(data)
    response = call(h, describe_log_dirs, 4, {"topics": None})
    [log_dir] = response.results
    assert (response.error_code, log_dir.error_code, log_dir.log_dir) == (0, 0, ":memory:")
    sizes = [(p.partition_index, p.partition_size) for t in log_dir.topics for p in t.partitions]
    assert sizes == [(0, len(data.data)), (1, 0)]
    assert 0 < log_dir.usable_bytes <= log_dir.total_bytes


@pytest.mark.parametrize("version", [0, 3])
def test_describe_log_dirs_needs_describe_on_the_cluster(version: int) -> None:
    h = secured()
    response = call(h, describe_log_dirs, version, {"topics": None}, ALICE)
    assert response.results == []
    assert response.error_code == (CAF if version >= 3 else 0)


# --- OffsetForLeaderEpoch -------------------------------------------------------------------


def epoch_request(topic: str, partition: int, leader_epoch: int, current: int = -1) -> dict[str, Any]:
    partitions = [{"partition": partition, "current_leader_epoch": current, "leader_epoch": leader_epoch}]
    return {"replica_id": -1, "topics": [{"topic": topic, "partitions": partitions}]}


def end_offset(h: Harness, version: int, *args: Any, principal: str | None = None) -> tuple[int, int, int]:
    response = call(h, offset_for_leader_epoch, version, epoch_request(*args), principal)
    [p] = response.topics[0].partitions
    return p.error_code, p.leader_epoch, p.end_offset


@pytest.mark.parametrize("version", range(5))
def test_epoch_zero_ends_at_the_log_end(version: int) -> None:
    h = Harness()
    h.broker.topics.create("t")
    appended(h, "t", 0, b"a", b"b", b"c")
    epoch = 0 if version >= 1 else -1  # v0 carries no epoch in its answer
    assert end_offset(h, version, "t", 0, 0) == (0, epoch, 3)
    assert end_offset(h, version, "t", 0, 1) == (0, -1, -1)  # newer than any: no end
    assert end_offset(h, version, "t", 0, -1) == (0, -1, -1)
    assert end_offset(h, version, "t", 1, 0) == (ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, -1, -1)


def test_current_leader_epoch_is_checked_from_v2() -> None:
    h = Harness()
    h.broker.topics.create("t")
    appended(h, "t", 0, b"a")
    assert end_offset(h, 2, "t", 0, 0, 0) == (0, 0, 1)
    assert end_offset(h, 2, "t", 0, 0, 1) == (ErrorCode.UNKNOWN_LEADER_EPOCH, -1, -1)
    assert end_offset(h, 2, "t", 0, 0, -2) == (ErrorCode.FENCED_LEADER_EPOCH, -1, -1)
    assert end_offset(h, 1, "t", 0, 0, 5) == (0, 0, 1)  # v0-1 carry no current epoch


def test_an_epoch_older_than_the_first_ends_where_the_log_starts() -> None:
    h = Harness()
    h.broker.topics.create("t")
    appended(h, "t", 0, b"a", b"b")
    log = h.broker.topics.partition("t", 0)
    assert log is not None
    log.delete_records(1)
    assert end_offset(h, 4, "t", 0, -3) == (0, -3, 1)


def test_offset_for_leader_epoch_needs_describe_on_the_topic() -> None:
    h = secured()
    assert end_offset(h, 4, "A", 0, 0, principal=ALICE) == (0, 0, 0)
    assert end_offset(h, 4, "B", 0, 0, principal=ALICE)[0] == TAF
    assert end_offset(h, 4, "missing", 0, 0, principal=ALICE)[0] == TAF


# --- DescribeTopicPartitions ----------------------------------------------------------------


def describe_page(h: Harness, names: list[str], limit: int = 2000, cursor: Any = None, **kw: Any) -> Any:
    request = {"topics": [{"name": n} for n in names], "response_partition_limit": limit, "cursor": cursor}
    return call(h, describe_topic_partitions, 0, request, kw.get("principal"))


def pages(h: Harness, names: list[str], limit: int) -> list[list[tuple[str, list[int]]]]:
    cursor, seen = None, []
    while True:
        response = describe_page(h, names, limit, cursor)
        seen.append([(t.name, [p.partition_index for p in t.partitions]) for t in response.topics])
        if response.next_cursor is None:
            return seen
        cursor = {
            "topic_name": response.next_cursor.topic_name,
            "partition_index": response.next_cursor.partition_index,
        }


def test_describe_topic_partitions_pages_by_cursor_in_name_order() -> None:
    h = Harness()
    for name, count in (("c", 1), ("a", 3), ("b", 2)):
        h.broker.topics.create(name, count)
    assert pages(h, [], 2) == [[("a", [0, 1])], [("a", [2]), ("b", [0])], [("b", [1]), ("c", [0])]]
    assert pages(h, ["c", "a"], 3) == [[("a", [0, 1, 2])], [("c", [0])]]
    assert pages(h, [], 6) == [[("a", [0, 1, 2]), ("b", [0, 1]), ("c", [0])]]


def test_max_request_partition_size_limit_caps_what_a_request_asks() -> None:
    h = Harness(max_request_partition_size_limit=1)
    h.broker.topics.create("a", 2)
    assert pages(h, [], 2000) == [[("a", [0])], [("a", [1])]]
    assert pages(Harness(), [], 0) == [[]]  # no topics: no page to turn
    h.broker.topics.create("b", 1)
    assert pages(h, ["a", "b"], 0) == [[("a", [0])], [("a", [1])], [("b", [0])]]  # at least one


def test_describe_topic_partitions_describes_like_metadata() -> None:
    h = Harness()
    topic = h.broker.topics.create("a", 1)
    [entry] = describe_page(h, ["a"]).topics
    assert (entry.error_code, entry.name, entry.topic_id, entry.is_internal) == (
        0,
        "a",
        topic.topic_id,
        False,
    )
    [p] = entry.partitions
    assert (p.leader_id, p.leader_epoch, p.replica_nodes, p.isr_nodes, p.offline_replicas) == (
        0,
        0,
        [0],
        [0],
        [],
    )
    assert (p.eligible_leader_replicas, p.last_known_elr) == ([], [])
    assert entry.topic_authorized_operations > 0


def test_describe_topic_partitions_errors() -> None:
    h = Harness()
    h.broker.topics.create("a")
    response = describe_page(h, ["a", "missing", "bad name"])
    assert [(t.name, t.error_code) for t in response.topics] == [
        ("a", 0),
        ("bad name", ErrorCode.INVALID_TOPIC_EXCEPTION),
        ("missing", ErrorCode.UNKNOWN_TOPIC_OR_PARTITION),
    ]
    # The cursor's topic must be among those named, its partition not negative.
    for cursor in ({"topic_name": "b", "partition_index": 0}, {"topic_name": "a", "partition_index": -1}):
        refused = describe_page(h, ["a"], cursor=cursor)
        assert [(t.name, t.error_code, t.partitions) for t in refused.topics] == [
            ("a", ErrorCode.INVALID_REQUEST, [])
        ]


def test_describe_topic_partitions_hides_or_refuses_what_may_not_be_described() -> None:
    h = secured()
    assert [t.name for t in describe_page(h, [], principal=ALICE).topics] == ["A"]
    named = describe_page(h, ["B", "A"], principal=ALICE).topics
    assert [(t.name, t.error_code, t.topic_id) for t in named] == [
        ("A", 0, named[0].topic_id),
        ("B", TAF, ZERO_UUID),
    ]


# --- ElectLeaders ---------------------------------------------------------------------------


@pytest.mark.parametrize("version", range(3))
def test_the_only_replica_already_leads_so_no_election_is_needed(version: int) -> None:
    h = Harness()
    h.broker.topics.create("t", 2)
    request = {
        "election_type": 0,
        "topic_partitions": [{"topic": "t", "partitions": [0, 1, 5]}, {"topic": "u", "partitions": [0]}],
    }
    response = call(h, elect_leaders, version, request)
    assert [
        (r.topic, [(p.partition_id, p.error_code, p.error_message) for p in r.partition_result])
        for r in response.replica_election_results
    ] == [
        (
            "t",
            [
                (0, ErrorCode.ELECTION_NOT_NEEDED, "Leader election not needed for topic partition."),
                (1, ErrorCode.ELECTION_NOT_NEEDED, "Leader election not needed for topic partition."),
                (5, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, "No such partition as t-5"),
            ],
        ),
        ("u", [(0, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, "No such topic as u")]),
    ]
    every = call(h, elect_leaders, version, {"election_type": 1, "topic_partitions": None})
    assert [(r.topic, r.partition_result) for r in every.replica_election_results] == [("t", [])]


def test_elect_leaders_needs_alter_on_the_cluster_and_a_known_type() -> None:
    h = secured()
    request = {"election_type": 0, "topic_partitions": [{"topic": "A", "partitions": [0]}]}
    denied = call(h, elect_leaders, 2, request, ALICE)
    assert denied.error_code == CAF
    assert denied.replica_election_results[0].partition_result[0].error_code == CAF
    unknown = call(h, elect_leaders, 2, request | {"election_type": 7}, ADMIN)
    assert unknown.error_code == ErrorCode.INVALID_REQUEST


# --- Alter/ListPartitionReassignments -------------------------------------------------------


def reassign(
    h: Harness,
    partitions: list[dict[str, Any]],
    topic: str = "t",
    principal: str | None = None,
    allow_replication_factor_change: bool | None = None,
) -> Any:
    request = {"timeout_ms": 1000, "topics": [{"name": topic, "partitions": partitions}]}
    if allow_replication_factor_change is None:
        return call(h, alter_partition_reassignments, 0, request, principal)
    request["allow_replication_factor_change"] = allow_replication_factor_change
    return call(h, alter_partition_reassignments, 1, request, principal)


@pytest.mark.parametrize(
    ("nodes", "allow", "code", "message"),
    [
        (1, False, ErrorCode.NONE, None),  # [0] keeps the one replica
        (3, True, ErrorCode.NONE, None),
        (3, False, ErrorCode.INVALID_REPLICATION_FACTOR, "The replication factor is changed from 3 to 1"),
    ],
)
def test_v1_can_forbid_changing_the_replication_factor(
    nodes: int, allow: bool, code: ErrorCode, message: str | None
) -> None:
    """KIP-860 (Kafka 4.1): ReplicationControlManager.validatePartitionReplicationFactorUnchanged;
    the answer echoes the flag. An emulated cluster places every partition on every node."""
    h = Harness(brokers=nodes)
    h.broker.topics.create("t", 1)
    response = reassign(h, [{"partition_index": 0, "replicas": [0]}], allow_replication_factor_change=allow)
    assert response.allow_replication_factor_change is allow
    assert [(p.error_code, p.error_message) for p in response.responses[0].partitions] == [(code, message)]


def test_reassignments_onto_this_broker_complete_and_others_are_refused() -> None:
    h = Harness()
    h.broker.topics.create("t", 2)
    response = reassign(
        h,
        [
            {"partition_index": 0, "replicas": [0]},
            {"partition_index": 1, "replicas": [0, 3]},
            {"partition_index": 1, "replicas": []},
            {"partition_index": 1, "replicas": [0, 0]},
            {"partition_index": 0, "replicas": None},
            {"partition_index": 9, "replicas": [0]},
        ],
    )
    assert (response.error_code, response.error_message) == (0, None)
    assert [(p.error_code, p.error_message) for p in response.responses[0].partitions] == [
        (0, None),
        (
            ErrorCode.INVALID_REPLICA_ASSIGNMENT,
            "The manual partition assignment includes broker 3, but no such broker is registered.",
        ),
        (
            ErrorCode.INVALID_REPLICA_ASSIGNMENT,
            "The manual partition assignment includes an empty replica list.",
        ),
        (
            ErrorCode.INVALID_REPLICA_ASSIGNMENT,
            "The manual partition assignment includes the broker 0 more than once.",
        ),
        (ErrorCode.NO_REASSIGNMENT_IN_PROGRESS, None),
        (ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, "Unable to find partition t:9."),
    ]
    missing = reassign(h, [{"partition_index": 0, "replicas": [0]}], topic="u")
    assert missing.responses[0].partitions[0].error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    for topics in (None, [{"name": "t", "partition_indexes": [0, 1]}]):
        listed = call(h, list_partition_reassignments, 0, {"timeout_ms": 1000, "topics": topics})
        assert (listed.error_code, listed.topics) == (0, [])


def test_reassignments_need_alter_or_describe_on_the_cluster() -> None:
    h = secured()
    denied = reassign(h, [{"partition_index": 0, "replicas": [0]}], topic="A", principal=ALICE)
    assert (denied.error_code, denied.responses[0].partitions[0].error_code) == (CAF, CAF)
    request = {"timeout_ms": 1000, "topics": [{"name": "A", "partition_indexes": [0]}]}
    listed = call(h, list_partition_reassignments, 0, request, ALICE)
    assert listed.error_code == CAF
    assert [(t.name, [p.partition_index for p in t.partitions]) for t in listed.topics] == [("A", [0])]


# --- AlterReplicaLogDirs --------------------------------------------------------------------


def move(
    h: Harness, version: int, path: str, topic: str, *partitions: int, principal: str | None = None
) -> Any:
    request = {"dirs": [{"path": path, "topics": [{"name": topic, "partitions": list(partitions)}]}]}
    response = call(h, alter_replica_log_dirs, version, request, principal)
    return [(r.topic_name, p.partition_index, p.error_code) for r in response.results for p in r.partitions]


@pytest.mark.parametrize("version", range(3))
def test_partitions_already_live_in_the_only_log_dir(on_disk: Harness, version: int, tmp_path: Path) -> None:
    h = on_disk
    h.broker.topics.create("t", 2)
    storage = h.broker.storage
    assert storage is not None
    here = str(storage.data_dir.path.absolute())
    assert move(h, version, here, "t", 0, 1, 4) == [
        ("t", 0, 0),
        ("t", 1, 0),
        ("t", 4, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION),
    ]
    assert move(h, version, str(tmp_path / "other"), "t", 0) == [("t", 0, ErrorCode.LOG_DIR_NOT_FOUND)]
    assert move(h, version, here, "x" * 249, 0) == [("x" * 249, 0, ErrorCode.INVALID_TOPIC_EXCEPTION)]


def test_alter_replica_log_dirs_in_memory_and_unauthorized() -> None:
    h = secured()
    assert move(h, 2, "/tmp", "A", 0, principal=ADMIN) == [("A", 0, ErrorCode.LOG_DIR_NOT_FOUND)]
    # The one directory DescribeLogDirs describes: already there.
    assert move(h, 2, ":memory:", "A", 0, principal=ADMIN) == [("A", 0, ErrorCode.NONE)]
    assert move(h, 2, "/tmp", "A", 0, principal=ALICE) == [("A", 0, CAF)]
