"""What the coordinator hands the offsets log, and how it comes back from it.

Records are checked in domain terms (protocol.offsets_records values); the
bytes are the offsets-log tests' business. Replays go through `load`, the
same path a broker start takes.
"""

from __future__ import annotations

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.protocol.offsets_records import GroupKey, GroupValue, OffsetKey, OffsetsRecord, OffsetValue
from kafka_shim.shim.coordinator.config import CoordinatorConfig
from kafka_shim.shim.coordinator.coordinator import GroupCoordinator
from kafka_shim.shim.coordinator.outcome import Outcome
from kafka_shim.shim.coordinator.state import GroupState
from kafka_shim.shim.coordinator.types import CommitRequest, GroupTimer, OffsetCommit, TopicPartition
from tests.shim.coordinator.harness import GROUP, SESSION_MS, Harness

T0 = TopicPartition("t", 0)
T1 = TopicPartition("t", 1)


def commit(h: Harness, offsets: dict[TopicPartition, int], generation: int = -1, member: str = "") -> None:
    request = CommitRequest(GROUP, {tp: OffsetCommit(o) for tp, o in offsets.items()}, generation, member)
    errors = h.apply(h.coordinator.commit_offsets(request, h.now))
    assert set(errors.values()) == {ErrorCode.NONE}


def restarted(h: Harness, log: list[OffsetsRecord], **config: int) -> Harness:
    """A new coordinator loaded from everything the old one emitted."""
    fresh = Harness(**config)
    fresh.now = h.now
    fresh.apply(fresh.coordinator.load(log, h.now))
    return fresh


def test_a_commit_is_one_outcome_with_one_record_per_partition() -> None:
    h = Harness()
    request = CommitRequest(GROUP, {T0: OffsetCommit(5), T1: OffsetCommit(7)})
    outcome = h.coordinator.commit_offsets(request, h.now)
    assert outcome.response == {T0: ErrorCode.NONE, T1: ErrorCode.NONE}
    assert outcome.records == (
        OffsetsRecord(OffsetKey(GROUP, "t", 0), OffsetValue(5, -1, "", h.now)),
        OffsetsRecord(OffsetKey(GROUP, "t", 1), OffsetValue(7, -1, "", h.now)),
    )
    assert outcome.replies == ()
    # The new group's first deadline: the offsets retention check.
    assert outcome.timers == (
        (GroupTimer("retention"), h.now + CoordinatorConfig().offsets_retention_check_interval_ms),
    )


def test_a_refused_commit_emits_nothing() -> None:
    h = Harness()
    h.stable_group("a")
    h.take_records()
    errors = h.apply(
        h.coordinator.commit_offsets(CommitRequest(GROUP, {T0: OffsetCommit(1)}, 99, "nobody"), h.now)
    )
    assert errors[T0] == ErrorCode.UNKNOWN_MEMBER_ID
    assert h.take_records() == []


def test_a_completed_rebalance_records_members_and_assignments() -> None:
    h = Harness()
    ids = h.stable_group("a", "b")
    (record,) = h.take_records()
    assert record.key == GroupKey(GROUP)
    value = record.value
    assert isinstance(value, GroupValue)
    assert (value.protocol_type, value.generation, value.protocol) == (
        "consumer",
        h.group().generation_id,
        "range",
    )
    assert value.leader == ids["a"]
    assert value.current_state_timestamp == h.now
    assert [(m.member_id, m.client_id, m.assignment) for m in value.members] == [
        (ids["a"], "a", b"assignment-a"),
        (ids["b"], "b", b"assignment-b"),
    ]
    assert value.members[0].subscription == h.group().members[ids["a"]].protocols[0].metadata
    assert (value.members[0].session_timeout, value.members[0].rebalance_timeout) == (10_000, 30_000)


def test_a_group_going_empty_records_its_empty_generation() -> None:
    h = Harness()
    ids = h.stable_group("a")
    h.take_records()
    h.apply(h.coordinator.leave_group(GROUP, [_identity(ids["a"])], h.now))
    (record,) = h.take_records()
    assert record.value == GroupValue("consumer", 2, None, None, h.now, ())


def test_deleting_a_group_tombstones_its_offsets_then_the_group() -> None:
    h = Harness()
    commit(h, {T0: 1, T1: 2})
    h.take_records()
    assert h.apply(h.coordinator.delete_groups([GROUP], h.now)) == {GROUP: ErrorCode.NONE}
    assert h.take_records() == [
        OffsetsRecord(OffsetKey(GROUP, "t", 0), None),
        OffsetsRecord(OffsetKey(GROUP, "t", 1), None),
        OffsetsRecord(GroupKey(GROUP), None),
    ]


def test_offset_delete_tombstones_only_what_it_removed() -> None:
    h = Harness()
    commit(h, {T0: 1, T1: 2})
    h.take_records()
    h.apply(h.coordinator.delete_offsets(GROUP, [T0, TopicPartition("never", 0)], h.now))
    assert h.take_records() == [OffsetsRecord(OffsetKey(GROUP, "t", 0), None)]


def test_expiry_tombstones_offsets_and_the_dead_group() -> None:
    h = Harness(offsets_retention_ms=60_000, offsets_retention_check_interval_ms=10_000)
    commit(h, {T0: 1})
    h.take_records()
    h.advance(70_000)
    assert h.take_records() == [
        OffsetsRecord(OffsetKey(GROUP, "t", 0), None),
        OffsetsRecord(GroupKey(GROUP), None),
    ]
    assert h.coordinator.group(GROUP) is None


def test_replay_brings_groups_back_with_their_members_and_offsets() -> None:
    """As Kafka's coordinator loads a classic group (GroupMetadataManager.onLoaded): Stable at
    its generation with the recorded members, each given a session from the load, so a
    member's next heartbeat or commit is answered as before the restart; one that never comes
    back expires after its session timeout and the others rebalance without it."""
    h = Harness()
    log = h.log  # everything the coordinator's outcomes appended
    ids = h.stable_group("a", "b")
    before = h.group()
    generation, leader = before.generation_id, before.leader_id
    assignments = {member_id: member.assignment for member_id, member in before.members.items()}
    commit(h, {T0: 10, T1: 20}, generation=generation, member=ids["a"])
    commit(h, {T0: 11}, generation=generation, member=ids["b"])
    h.advance(1_000)

    after = restarted(h, log)
    group = after.group()
    assert group.state == GroupState.STABLE
    assert (group.generation_id, group.protocol_type, group.leader_id) == (generation, "consumer", leader)
    assert {member_id: m.assignment for member_id, m in group.members.items()} == assignments
    assert {tp: o.offset for tp, o in group.offsets.items()} == {T0: 11, T1: 20}
    assert after.heartbeat(ids["a"], generation) == ErrorCode.NONE
    commit(after, {T0: 12}, generation=generation, member=ids["a"])
    # b never heartbeats again: it expires a session after the load, and the group rebalances.
    after.advance(SESSION_MS - 1)
    assert after.heartbeat(ids["a"], generation) == ErrorCode.NONE
    after.advance(1)
    assert ids["b"] not in after.group().members
    assert after.heartbeat(ids["a"], generation) == ErrorCode.REBALANCE_IN_PROGRESS


def test_replay_brings_a_group_left_by_its_members_back_empty() -> None:
    h = Harness()
    log = h.log
    ids = h.stable_group("a")
    generation = h.group().generation_id
    commit(h, {T0: 5}, generation=generation, member=ids["a"])
    h.apply(h.coordinator.leave_group(GROUP, [_identity(ids["a"])], h.now))
    emptied_at = h.now
    h.advance(1_000)

    after = restarted(h, log)
    group = after.group()
    assert group.state == GroupState.EMPTY and not group.members
    assert (group.generation_id, group.state_since_ms) == (generation + 1, emptied_at)
    assert after.heartbeat(ids["a"], generation) == ErrorCode.UNKNOWN_MEMBER_ID
    assert after.coordinator.fetch_offsets(GROUP, [T0])[T0].offset == 5


def test_replay_applies_tombstones_and_deletions_in_order() -> None:
    h = Harness()
    log = h.log  # everything the coordinator's outcomes appended
    commit(h, {T0: 1, T1: 2})
    h.apply(h.coordinator.delete_offsets(GROUP, [T1], h.now))
    other = CommitRequest("other", {T0: OffsetCommit(3)})
    h.apply(h.coordinator.commit_offsets(other, h.now))
    h.apply(h.coordinator.delete_groups(["other"], h.now))

    after = restarted(h, log)
    assert set(after.group().offsets) == {T0}
    assert after.coordinator.group("other") is None


def test_an_empty_group_keeps_the_time_it_became_empty_across_replay() -> None:
    h = Harness(offsets_retention_ms=60_000, offsets_retention_check_interval_ms=5_000)
    log = h.log  # everything the coordinator's outcomes appended
    ids = h.stable_group("a")
    commit(h, {T0: 1}, generation=1, member=ids["a"])
    h.apply(h.coordinator.leave_group(GROUP, [_identity(ids["a"])], h.now))
    emptied_at = h.now
    h.now += 50_000

    after = restarted(h, log, offsets_retention_ms=60_000, offsets_retention_check_interval_ms=5_000)
    assert after.group().state_since_ms == emptied_at
    after.advance(10_000)  # 60 s after the group emptied, not after the restart
    assert after.coordinator.group(GROUP) is None
    assert after.take_records()[-1] == OffsetsRecord(GroupKey(GROUP), None)


def test_loading_emits_nothing_but_the_retention_check() -> None:
    coordinator = GroupCoordinator()
    outcome = coordinator.load([OffsetsRecord(OffsetKey(GROUP, "t", 0), OffsetValue(1, -1, "", 0))], 5)
    assert outcome == Outcome(
        None, (), ((GroupTimer("retention"), 5 + CoordinatorConfig().offsets_retention_check_interval_ms),)
    )
    assert coordinator.fetch_offsets(GROUP, [T0])[T0].offset == 1


def _identity(member_id: str):  # type: ignore[no-untyped-def]
    from kafka_shim.shim.coordinator.types import MemberIdentity

    return MemberIdentity(member_id)
