"""Handlers end to end through the wire schemas, with a synchronous test RequestContext."""

from __future__ import annotations

from typing import Any

import pytest

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.shim.coordinator.types import TopicPartition
from tests.helpers import Harness, subscription


@pytest.fixture
def h() -> Harness:
    return Harness()


def join_body(member_id: str = "", instance: str | None = None) -> dict[str, Any]:
    return {
        "group_id": "g",
        "session_timeout_ms": 10_000,
        "rebalance_timeout_ms": 20_000,
        "member_id": member_id,
        "group_instance_id": instance,
        "protocol_type": "consumer",
        "protocols": [{"name": "range", "metadata": subscription("t")}],
    }


@pytest.mark.parametrize("version", range(7))
def test_find_coordinator_answers_this_broker(h: Harness, version: int) -> None:
    response = h.call(10, version, {"key": "g", "key_type": 0, "coordinator_keys": ["g", "h"]})
    if version >= 4:
        assert [(c.key, c.node_id, c.port, c.error_code) for c in response.coordinators] == [
            ("g", 0, 19092, 0),
            ("h", 0, 19092, 0),
        ]
    else:
        assert (response.error_code, response.node_id, response.host, response.port) == (
            0,
            0,
            "127.0.0.1",
            19092,
        )


def test_join_v4_needs_a_member_id_then_forms_the_group(h: Harness) -> None:
    first = h.call(11, 4, join_body())
    assert first.error_code == ErrorCode.MEMBER_ID_REQUIRED and first.member_id.startswith("handler-test-")
    second = h.call(11, 4, join_body(first.member_id))
    assert (second.error_code, second.generation_id, second.leader) == (0, 1, first.member_id)
    assert [m.member_id for m in second.members] == [first.member_id]


@pytest.mark.parametrize("version", range(4))
def test_join_v0_to_v3_admits_an_empty_member_id_directly(h: Harness, version: int) -> None:
    response = h.call(11, version, join_body())
    assert response.error_code == 0 and response.generation_id == 1


def test_join_before_v7_sends_no_protocol_as_empty_string(h: Harness) -> None:
    h.call(11, 4, join_body())  # MEMBER_ID_REQUIRED: no protocol chosen
    response = h.call(11, 6, join_body())
    assert response.error_code == ErrorCode.MEMBER_ID_REQUIRED and response.protocol_name == ""
    assert h.call(11, 7, join_body()).protocol_name is None


def form_group(h: Harness) -> str:
    member_id = h.call(11, 5, join_body("", instance=None)).member_id
    joined = h.call(11, 5, join_body(member_id))
    sync = h.call(
        14,
        5,
        {
            "group_id": "g",
            "generation_id": joined.generation_id,
            "member_id": member_id,
            "protocol_type": "consumer",
            "protocol_name": "range",
            "assignments": [{"member_id": member_id, "assignment": b"\x00\x01"}],
        },
    )
    assert (sync.error_code, sync.assignment, sync.protocol_name) == (0, b"\x00\x01", "range")
    return str(member_id)


def test_sync_v5_requires_protocol_type_and_name(h: Harness) -> None:
    member_id = form_group(h)
    body = {"group_id": "g", "generation_id": 1, "member_id": member_id, "protocol_type": "consumer"}
    assert h.call(14, 5, body).error_code == ErrorCode.INCONSISTENT_GROUP_PROTOCOL
    assert h.call(14, 4, body).error_code == ErrorCode.NONE  # v4 does not carry them


def test_heartbeat_commit_fetch_describe_list_leave_delete(h: Harness) -> None:
    member_id = form_group(h)
    h.broker.topics.create("t")
    assert h.call(12, 4, {"group_id": "g", "generation_id": 1, "member_id": member_id}).error_code == 0
    assert h.call(12, 0, {"group_id": "g", "generation_id": 0, "member_id": member_id}).error_code == (
        ErrorCode.ILLEGAL_GENERATION
    )
    commit = {
        "group_id": "g",
        "generation_id_or_member_epoch": 1,
        "member_id": member_id,
        "topics": [{"name": "t", "partitions": [{"partition_index": 0, "committed_offset": 5}]}],
    }
    assert h.call(8, 8, commit).topics[0].partitions[0].error_code == 0
    fetched = h.call(9, 5, {"group_id": "g", "topics": None})
    assert [
        (t.name, p.partition_index, p.committed_offset) for t in fetched.topics for p in t.partitions
    ] == [("t", 0, 5)]
    batched = h.call(9, 8, {"groups": [{"group_id": "g", "topics": None}, {"group_id": "x", "topics": []}]})
    assert [g.group_id for g in batched.groups] == ["g", "x"]
    assert batched.groups[0].topics[0].partitions[0].committed_offset == 5

    described = h.call(15, 5, {"groups": ["g"], "include_authorized_operations": True}).groups[0]
    assert (described.group_state, described.protocol_data) == ("Stable", "range")
    assert described.members[0].client_host == "/127.0.0.1"
    assert described.members[0].member_assignment == b"\x00\x01"
    listed = h.call(16, 4, {"states_filter": ["stable"]}).groups
    assert [(g.group_id, g.group_state) for g in listed] == [("g", "Stable")]

    assert h.call(42, 2, {"groups_names": ["g"]}).results[0].error_code == ErrorCode.NON_EMPTY_GROUP
    deleted_offset = h.call(
        47, 0, {"group_id": "g", "topics": [{"name": "t", "partitions": [{"partition_index": 0}]}]}
    )
    assert deleted_offset.topics[0].partitions[0].error_code == ErrorCode.GROUP_SUBSCRIBED_TO_TOPIC

    left = h.call(13, 2, {"group_id": "g", "member_id": member_id})
    assert left.error_code == 0
    assert h.call(13, 1, {"group_id": "g", "member_id": member_id}).error_code == ErrorCode.UNKNOWN_MEMBER_ID
    assert h.call(42, 2, {"groups_names": ["g", "nope"]}).results[1].error_code == (
        ErrorCode.GROUP_ID_NOT_FOUND
    )


def test_leave_v3_batch_reports_each_member(h: Harness) -> None:
    member_id = form_group(h)
    body = {"group_id": "g", "members": [{"member_id": member_id}, {"member_id": "ghost"}]}
    response = h.call(13, 3, body)
    assert response.error_code == 0
    assert [(m.member_id, m.error_code) for m in response.members] == [
        (member_id, 0),
        ("ghost", ErrorCode.UNKNOWN_MEMBER_ID),
    ]


def test_commit_v2_with_a_huge_retention_wraps_as_kafkas_long_sum(h: Harness) -> None:
    h.broker.topics.create("t")
    body = {
        "group_id": "g",
        "generation_id_or_member_epoch": -1,
        "member_id": "",
        "retention_time_ms": 2**63 - 1,
        "topics": [{"name": "t", "partitions": [{"partition_index": 0, "committed_offset": 5}]}],
    }
    assert h.call(8, 2, body).topics[0].partitions[0].error_code == 0
    group = h.broker.groups.group("g")
    assert group is not None
    # now + Long.MAX_VALUE overflows to a timestamp in the past, as in Kafka.
    assert group.offsets[TopicPartition("t", 0)].expire_timestamp == h.clock() + 2**63 - 1 - 2**64


@pytest.mark.parametrize(
    "metadata",
    [b"", b"\xff\xff", b"\x00\x00\x00\x00\x00\x05", b"\x00\x01\x00\x00\x00\x01\x7f\xff"],
    ids=["empty", "negative-version", "array-past-end", "topic-past-end"],
)
def test_join_accepts_consumer_metadata_that_does_not_parse(h: Harness, metadata: bytes) -> None:
    """Kafka 3.9's classic coordinator never parses the protocol metadata to admit a member
    (GroupCoordinator.handleJoinGroup treats it as opaque; only the subscribed-topics bookkeeping
    for offset expiry reads it, and skips metadata it cannot read): the join and the sync
    succeed, and the leader gets the bytes back as sent."""
    body = join_body() | {"protocols": [{"name": "range", "metadata": metadata}]}
    member_id = h.call(11, 5, body).member_id
    joined = h.call(11, 5, body | {"member_id": member_id})
    assert (joined.error_code, joined.generation_id, joined.leader) == (0, 1, member_id)
    assert [bytes(m.metadata) for m in joined.members] == [metadata]
    sync = {"group_id": "g", "generation_id": 1, "member_id": member_id}
    synced = h.call(14, 3, sync | {"assignments": [{"member_id": member_id, "assignment": b"x"}]})
    assert (synced.error_code, bytes(synced.assignment)) == (0, b"x")
