"""KIP-848's online migration through the handlers and the broker, which moves a group between
the classic and the consumer-group coordinator: one broker on a fake clock, requests and
answers through the wire schemas."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kafka_shim.protocol import consumer_protocol
from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.shim.handlers import (
    consumer_group_describe,
    consumer_group_heartbeat,
    describe_groups,
    heartbeat,
    join_group,
    leave_group,
    offset_commit,
    offset_fetch,
    sync_group,
)
from tests.helpers import Harness, subscription

GROUP = "g"
PARTITIONS = 4


def new_harness(**config: Any) -> Harness:
    harness = Harness(**config)
    harness.broker.topics.create("t", PARTITIONS, {})
    return harness


def classic_join(harness: Harness, member_id: str = "") -> Any:
    body = {
        "group_id": GROUP,
        "session_timeout_ms": 10_000,
        "rebalance_timeout_ms": 20_000,
        "member_id": member_id,
        "protocol_type": "consumer",
        "protocols": [{"name": "range", "metadata": subscription("t")}],
    }
    return harness.call(join_group, 3, body)


def classic_sync(harness: Harness, member_id: str, generation: int, assignment: bytes | None = None) -> Any:
    body = {
        "group_id": GROUP,
        "generation_id": generation,
        "member_id": member_id,
        "protocol_type": "consumer",
        "protocol_name": "range",
        "assignments": [] if assignment is None else [{"member_id": member_id, "assignment": assignment}],
    }
    return harness.call(sync_group, 5, body)


def classic_heartbeat(harness: Harness, member_id: str, generation: int) -> int:
    body = {"group_id": GROUP, "generation_id": generation, "member_id": member_id}
    return int(harness.call(heartbeat, 3, body).error_code)


def partitions_of(assignment: bytes) -> list[int]:
    return sorted(p for _, p in consumer_protocol.decode_assignment(assignment))


def consumer_beat(harness: Harness, member: str, epoch: int, **fields: Any) -> Any:
    request = {"group_id": GROUP, "member_id": member, "member_epoch": epoch, **fields}
    if epoch == 0:
        request.update(rebalance_timeout_ms=20_000, subscribed_topic_names=["t"], topic_partitions=[])
    return harness.call(consumer_group_heartbeat, 1, request)


def committed(harness: Harness) -> dict[int, int]:
    body = {"group_id": GROUP, "topics": [{"name": "t", "partition_indexes": list(range(PARTITIONS))}]}
    fetched = harness.call(offset_fetch, 5, body).topics[0].partitions
    return {p.partition_index: p.committed_offset for p in fetched}


def classic_group_with_a_commit(harness: Harness) -> tuple[str, int]:
    """One classic member owning every partition, with offset 7 committed for partition 0."""
    joined = classic_join(harness)
    assert (joined.error_code, joined.generation_id) == (0, 1)
    everything = consumer_protocol.encode_assignment({"t": list(range(PARTITIONS))}, 0)
    assert classic_sync(harness, joined.member_id, 1, everything).error_code == 0
    commit = {
        "group_id": GROUP,
        "generation_id_or_member_epoch": 1,
        "member_id": joined.member_id,
        "topics": [{"name": "t", "partitions": [{"partition_index": 0, "committed_offset": 7}]}],
    }
    assert harness.call(offset_commit, 5, commit).topics[0].partitions[0].error_code == 0
    return joined.member_id, 1


def test_a_rolling_upgrade_and_back_through_the_broker() -> None:
    harness = new_harness()
    classic, generation = classic_group_with_a_commit(harness)

    # A consumer-protocol member joins: the group becomes a consumer group, classic member inside.
    joined = consumer_beat(harness, "k", 0)
    assert (joined.error_code, joined.member_epoch, joined.assignment.topic_partitions) == (0, 2, [])
    entry = harness.broker.groups.group(GROUP)
    assert entry is not None and entry.members == {}  # the classic entry keeps only the offsets
    described = harness.call(consumer_group_describe, 1, {"group_ids": [GROUP]}).groups[0]
    assert sorted((m.member_id, m.member_type) for m in described.members) == sorted([(classic, 0), ("k", 1)])
    assert harness.call(describe_groups, 5, {"groups": [GROUP]}).groups[0].group_state == "Dead"

    # The classic member revokes by rejoining (twice: it gives up half, then moves on).
    assert classic_heartbeat(harness, classic, generation) == ErrorCode.REBALANCE_IN_PROGRESS
    kept = []
    for _ in range(2):
        rejoined = classic_join(harness, classic)
        synced = classic_sync(harness, classic, rejoined.generation_id)
        assert synced.error_code == 0
        kept = partitions_of(synced.assignment)
    assert rejoined.generation_id == 2 and len(kept) == PARTITIONS // 2
    k = consumer_beat(harness, "k", 2, topic_partitions=[])
    assert len(k.assignment.topic_partitions[0].partitions) == PARTITIONS // 2
    assert committed(harness)[0] == 7

    # The classic member commits with its generation.
    commit = {
        "group_id": GROUP,
        "generation_id_or_member_epoch": 2,
        "member_id": classic,
        "topics": [{"name": "t", "partitions": [{"partition_index": kept[0], "committed_offset": 9}]}],
    }
    assert harness.call(offset_commit, 5, commit).topics[0].partitions[0].error_code == 0

    # The consumer member leaves: the group is classic again, rebalancing; offsets kept.
    assert consumer_beat(harness, "k", -1).error_code == 0
    assert harness.broker.consumer_groups.group(GROUP) is None
    back = harness.call(describe_groups, 5, {"groups": [GROUP]}).groups[0]
    assert (back.group_state, [m.member_id for m in back.members]) == ("PreparingRebalance", [classic])
    assert classic_heartbeat(harness, classic, 2) == ErrorCode.REBALANCE_IN_PROGRESS
    rejoined = classic_join(harness, classic)
    assert (rejoined.error_code, rejoined.generation_id, rejoined.leader) == (0, 3, classic)
    assert committed(harness) == {0: 7, 1: -1, 2: -1, 3: -1} | {kept[0]: 9}


def test_no_upgrade_when_the_policy_disables_it() -> None:
    harness = new_harness(consumer_migration_policy="downgrade")
    classic, _ = classic_group_with_a_commit(harness)
    refused = consumer_beat(harness, "k", 0)
    assert (refused.error_code, refused.error_message) == (
        ErrorCode.GROUP_ID_NOT_FOUND,
        f"Group {GROUP} is not a consumer group.",
    )
    entry = harness.broker.groups.group(GROUP)
    assert entry is not None and list(entry.members) == [classic]


def test_a_classic_leave_from_a_mixed_group() -> None:
    harness = new_harness()
    classic, _ = classic_group_with_a_commit(harness)
    consumer_beat(harness, "k", 0)
    body = {"group_id": GROUP, "members": [{"member_id": classic}, {"member_id": "nobody"}]}
    left = harness.call(leave_group, 3, body)
    assert [m.error_code for m in left.members] == [0, ErrorCode.UNKNOWN_MEMBER_ID]
    group = harness.broker.consumer_groups.group(GROUP)
    assert group is not None and list(group.members) == ["k"]


def test_a_classic_join_to_a_consumer_group_needs_a_valid_session_timeout() -> None:
    harness = new_harness()
    consumer_beat(harness, "k", 0)
    body = {
        "group_id": GROUP,
        "session_timeout_ms": 1,
        "rebalance_timeout_ms": 20_000,
        "member_id": "",
        "protocol_type": "consumer",
        "protocols": [{"name": "range", "metadata": subscription("t")}],
    }
    assert harness.call(join_group, 3, body).error_code == ErrorCode.INVALID_SESSION_TIMEOUT


def test_a_mixed_group_and_its_offsets_survive_a_restart(tmp_path: Path) -> None:
    harness = new_harness(data_dir=tmp_path)
    classic, generation = classic_group_with_a_commit(harness)
    consumer_beat(harness, "k", 0)
    harness.broker.close()
    restarted = Harness(data_dir=tmp_path)
    group = restarted.broker.consumer_groups.group(GROUP)
    assert group is not None
    member = group.members[classic]
    assert member.classic is not None and member.classic.session_timeout_ms == 10_000
    # It carries on as a classic member: told to rejoin, and it revokes by rejoining.
    assert classic_heartbeat(restarted, classic, generation) == ErrorCode.REBALANCE_IN_PROGRESS
    assert classic_join(restarted, classic).generation_id == generation
    assert committed(restarted)[0] == 7
    restarted.broker.close()
