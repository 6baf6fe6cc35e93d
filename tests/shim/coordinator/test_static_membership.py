"""KIP-345 static members: restarts without rebalances, and fencing of stale member ids."""

from __future__ import annotations

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.shim.coordinator.state import GroupState
from kafka_shim.shim.coordinator.types import (
    CommitRequest,
    MemberIdentity,
    OffsetCommit,
    Protocol,
    TopicPartition,
)

from .harness import GROUP, REBALANCE_MS, Harness

S = GroupState


def static_stable_group(h: Harness) -> tuple[str, str]:
    leader = h.join(client="a", instance="ia")  # static members skip MEMBER_ID_REQUIRED
    assert leader.value.error == ErrorCode.NONE
    a = leader.value.member_id
    follower = h.join(client="b", instance="ib")
    rejoin = h.join(a, client="a", instance="ia")
    b = follower.value.member_id
    generation = rejoin.value.generation_id
    h.sync(b, generation, instance="ib")
    h.sync(a, generation, {a: b"pa", b: b"pb"}, instance="ia")
    assert h.state == S.STABLE
    return a, b


def test_restart_with_same_instance_id_replaces_member_id_without_rebalance() -> None:
    h = Harness()
    a, b = static_stable_group(h)
    restarted = h.join(client="b", instance="ib")  # a new process: no member id yet
    result = restarted.value
    assert result.error == ErrorCode.NONE and result.member_id not in (a, b)
    assert h.state == S.STABLE and result.generation_id == 2
    assert result.leader == a and result.members == ()
    # The new id is the member; its stored assignment survives the restart.
    assert h.sync(result.member_id, 2, instance="ib").value.assignment == b"pb"
    # The old incarnation is fenced everywhere.
    assert h.heartbeat(b, 2, instance="ib") == ErrorCode.FENCED_INSTANCE_ID
    assert h.sync(b, 2, instance="ib").value.error == ErrorCode.FENCED_INSTANCE_ID
    assert h.join(b, client="b", instance="ib").value.error == ErrorCode.FENCED_INSTANCE_ID
    commit = CommitRequest(GROUP, {TopicPartition("t", 0): OffsetCommit(1)}, 2, b, "ib")
    assert set(h.apply(h.coordinator.commit_offsets(commit, h.now)).values()) == {
        ErrorCode.FENCED_INSTANCE_ID
    }


def test_restarted_static_leader_is_not_told_it_leads_before_v9() -> None:
    h = Harness()
    a, _ = static_stable_group(h)
    result = h.join(client="a", instance="ia").value
    assert h.state == S.STABLE
    assert result.leader == a and result.member_id != a  # the old id: it will not run the assignor
    assert h.group().leader_id == result.member_id


def test_restarted_static_leader_skips_assignment_from_v9() -> None:
    h = Harness()
    static_stable_group(h)
    result = h.join(client="a", instance="ia", skip_assignment=True).value
    assert result.skip_assignment and result.leader == result.member_id
    assert len(result.members) == 2 and h.state == S.STABLE


def test_restart_with_no_protocol_in_common_is_refused() -> None:
    h = Harness()
    static_stable_group(h)
    reply = h.join(client="b", instance="ib", protocols=(Protocol("roundrobin", b""),))
    assert reply.value.error == ErrorCode.INCONSISTENT_GROUP_PROTOCOL and h.state == S.STABLE


def test_restart_while_completing_rebalances() -> None:
    h = Harness()
    a, _ = static_stable_group(h)
    h.join(a, client="a", instance="ia")  # leader rejoin
    h.join(h.group().static_members["ib"], client="b", instance="ib")
    assert h.state == S.COMPLETING_REBALANCE
    h.join(client="b", instance="ib")
    assert h.state == S.PREPARING_REBALANCE


def test_waiting_join_of_the_replaced_incarnation_is_fenced() -> None:
    h = Harness()
    a, b = static_stable_group(h)
    h.join(a, client="a", instance="ia")  # rebalance
    assert h.join(client="x").value.error == ErrorCode.MEMBER_ID_REQUIRED  # holds the join open
    waiting = h.join(b, client="b", instance="ib")
    assert not waiting.answered
    replacement = h.join(client="b", instance="ib")  # b restarted meanwhile
    assert waiting.value.error == ErrorCode.FENCED_INSTANCE_ID and waiting.value.member_id == b
    assert not replacement.answered and h.state == S.PREPARING_REBALANCE


def test_static_member_that_misses_the_rebalance_keeps_its_place() -> None:
    h = Harness()
    a, b = static_stable_group(h)
    rejoin = h.join(a, client="a", instance="ia")
    for _ in range(REBALANCE_MS // 5000):  # b is alive but does not rejoin in time
        h.heartbeat(b, 2, instance="ib")
        h.advance(5000)
    assert rejoin.value.generation_id == 3
    assert b in h.group().members  # dynamic members would have been dropped


def test_leave_by_instance_id_removes_the_static_member() -> None:
    h = Harness()
    _, b = static_stable_group(h)
    result = h.apply(
        h.coordinator.leave_group(GROUP, [MemberIdentity("", "ib"), MemberIdentity("", "nope")], h.now)
    )
    assert [e for _, e in result.members] == [ErrorCode.NONE, ErrorCode.UNKNOWN_MEMBER_ID]
    assert b not in h.group().members and h.state == S.PREPARING_REBALANCE


def test_unknown_instance_id_with_member_id_is_unknown_member() -> None:
    h = Harness()
    a, _ = static_stable_group(h)
    assert h.heartbeat(a, 2, instance="other") == ErrorCode.UNKNOWN_MEMBER_ID
