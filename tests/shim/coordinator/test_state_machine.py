"""Seed 000, section 2-4: the group's state x request table, and Kafka's valid transitions."""

from __future__ import annotations

import pytest

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.shim.coordinator import GroupState, MemberIdentity
from kafka_shim.shim.coordinator.state import VALID_PREVIOUS_STATES, IllegalTransition, check_transition

from .harness import GROUP, Harness

S = GroupState
ALLOWED = {
    (S.PREPARING_REBALANCE, S.COMPLETING_REBALANCE),
    (S.COMPLETING_REBALANCE, S.STABLE),
    (S.STABLE, S.PREPARING_REBALANCE),
    (S.COMPLETING_REBALANCE, S.PREPARING_REBALANCE),
    (S.EMPTY, S.PREPARING_REBALANCE),
    (S.PREPARING_REBALANCE, S.EMPTY),
} | {(s, S.DEAD) for s in S}


@pytest.mark.parametrize("current", list(S), ids=lambda s: s.value)
@pytest.mark.parametrize("target", list(S), ids=lambda s: s.value)
def test_transition_allowed_only_from_kafkas_valid_previous_states(current: S, target: S) -> None:
    if (current, target) in ALLOWED:
        check_transition("g", current, target)
        assert current in VALID_PREVIOUS_STATES[target]
    else:
        with pytest.raises(IllegalTransition):
            check_transition("g", current, target)


# --- Empty -------------------------------------------------------------------------------


def test_empty_join_prepares_rebalance_then_completes_to_completing_rebalance() -> None:
    h = Harness(initial_rebalance_delay_ms=100)
    member, reply = h.join_new("a")
    assert h.state == S.PREPARING_REBALANCE and not reply.answered
    h.advance(100)
    assert h.state == S.COMPLETING_REBALANCE
    assert reply.value.error == ErrorCode.NONE and reply.value.member_id == member


def test_empty_sync_is_an_error_and_leaves_the_state() -> None:
    h = Harness()
    ids = h.stable_group("a")
    h.coordinator.leave_group(GROUP, [MemberIdentity(ids["a"])], h.now)
    assert h.state == S.EMPTY
    assert h.sync(ids["a"], 1).value.error == ErrorCode.UNKNOWN_MEMBER_ID
    assert h.state == S.EMPTY


# --- Stable ------------------------------------------------------------------------------


def test_stable_join_by_new_member_prepares_rebalance() -> None:
    h = Harness()
    h.stable_group("a")
    _, reply = h.join_new("b")
    assert h.state == S.PREPARING_REBALANCE and not reply.answered


def test_stable_sync_answers_stored_assignment_and_keeps_state() -> None:
    h = Harness()
    ids = h.stable_group("a", "b")
    result = h.sync(ids["b"], 2).value
    assert result == result.__class__(ErrorCode.NONE, "consumer", "range", b"assignment-b")
    assert h.state == S.STABLE


# --- PreparingRebalance ------------------------------------------------------------------


def test_preparing_join_keeps_state_until_all_known_members_rejoined() -> None:
    h = Harness()
    ids = h.stable_group("a", "b")
    first = h.join(ids["a"], client="a")  # the leader's rejoin starts the rebalance
    assert h.state == S.PREPARING_REBALANCE and not first.answered
    _, newcomer = h.join_new("c")  # enters in PreparingRebalance: no new delayed join
    assert h.state == S.PREPARING_REBALANCE and not newcomer.answered
    last = h.join(ids["b"], client="b")  # the last known member: the delayed join completes
    assert h.state == S.COMPLETING_REBALANCE
    assert {r.value.generation_id for r in (first, newcomer, last)} == {3}


def test_preparing_sync_answers_rebalance_in_progress() -> None:
    h = Harness()
    ids = h.stable_group("a", "b")
    h.join(ids["a"], client="a")
    assert h.sync(ids["b"], 2).value.error == ErrorCode.REBALANCE_IN_PROGRESS
    assert h.state == S.PREPARING_REBALANCE


# --- CompletingRebalance -----------------------------------------------------------------


def test_completing_join_by_new_member_prepares_rebalance_and_fails_waiting_syncs() -> None:
    h = Harness()
    ids = h.stable_group("a")
    ids["b"], _ = h.join_new("b")
    rejoined = h.join(ids["a"], client="a")
    assert h.state == S.COMPLETING_REBALANCE
    generation = rejoined.value.generation_id
    follower_sync = h.sync(ids["b"], generation)
    assert not follower_sync.answered
    _, newcomer = h.join_new("c")
    assert h.state == S.PREPARING_REBALANCE and not newcomer.answered
    assert follower_sync.value.error == ErrorCode.REBALANCE_IN_PROGRESS


def test_completing_sync_from_follower_waits_and_from_leader_fans_out() -> None:
    h = Harness()
    a, _ = h.join_new("a")
    b, b_join = h.join_new("b")
    a_join = h.join(a, client="a")
    generation = a_join.value.generation_id
    assert a_join.value.leader == a and b_join.value.leader == a
    follower = h.sync(b, generation)
    assert not follower.answered and h.state == S.COMPLETING_REBALANCE
    leader = h.sync(a, generation, {a: b"pa", b: b"pb"})
    assert h.state == S.STABLE
    assert (leader.value.assignment, follower.value.assignment) == (b"pa", b"pb")


def test_leader_assignment_missing_a_member_sends_it_an_empty_assignment() -> None:
    h = Harness()
    a, _ = h.join_new("a")
    b, _ = h.join_new("b")
    generation = h.join(a, client="a").value.generation_id
    follower = h.sync(b, generation)
    h.sync(a, generation, {a: b"pa"})
    assert follower.value.error == ErrorCode.NONE and follower.value.assignment == b""


# --- Dead --------------------------------------------------------------------------------


def test_dead_group_answers_every_request_with_an_error() -> None:
    h = Harness()
    ids = h.stable_group("a")
    h.coordinator.leave_group(GROUP, [MemberIdentity(ids["a"])], h.now)
    assert h.coordinator.delete_groups([GROUP], h.now) == {GROUP: ErrorCode.NONE}
    assert h.coordinator.group(GROUP) is None
    assert h.join(ids["a"], client="a").value.error == ErrorCode.UNKNOWN_MEMBER_ID
    assert h.sync(ids["a"], 1).value.error == ErrorCode.UNKNOWN_MEMBER_ID
    assert h.heartbeat(ids["a"], 1) == ErrorCode.UNKNOWN_MEMBER_ID
    assert h.coordinator.describe_group(GROUP).state == "Dead"


# --- LeaveGroup by state (seed 000 section 5) ---------------------------------------------


@pytest.mark.parametrize("completing", [False, True], ids=["stable", "completing"])
def test_leave_in_stable_or_completing_starts_rebalance(completing: bool) -> None:
    h = Harness()
    ids = h.stable_group("a", "b")
    if completing:
        h.join(ids["a"], client="a")
        h.join(ids["b"], client="b")
        assert h.state == S.COMPLETING_REBALANCE
    result = h.coordinator.leave_group(GROUP, [MemberIdentity(ids["b"])], h.now)
    assert result.members[0][1] == ErrorCode.NONE
    assert h.state == S.PREPARING_REBALANCE
    assert ids["b"] not in h.group().members


def test_leave_in_preparing_completes_the_delayed_join() -> None:
    h = Harness()
    ids = h.stable_group("a", "b")
    waiting = h.join(ids["a"], client="a")
    assert not waiting.answered
    h.coordinator.leave_group(GROUP, [MemberIdentity(ids["b"])], h.now)
    assert h.state == S.COMPLETING_REBALANCE
    assert waiting.value.generation_id == 3 and [m.member_id for m in waiting.value.members] == [ids["a"]]


def test_last_member_leaving_empties_the_group_with_a_new_generation() -> None:
    h = Harness()
    ids = h.stable_group("a")
    h.coordinator.leave_group(GROUP, [MemberIdentity(ids["a"])], h.now)
    assert h.state == S.EMPTY
    assert h.group().generation_id == 2  # Kafka bumps the generation into Empty too


# --- Heartbeat by state (seed 000 section 7.2) --------------------------------------------


def test_heartbeat_by_state() -> None:
    h = Harness()
    ids = h.stable_group("a", "b")
    assert h.heartbeat(ids["b"], 2) == ErrorCode.NONE  # Stable
    h.join(ids["a"], client="a")
    assert h.heartbeat(ids["b"], 2) == ErrorCode.REBALANCE_IN_PROGRESS  # PreparingRebalance
    h.join(ids["b"], client="b")
    assert h.state == S.COMPLETING_REBALANCE
    # Seed 000 (from an older Kafka) answers REBALANCE_IN_PROGRESS here; Kafka since 2.x
    # treats it as a normal heartbeat because members may heartbeat right after JoinGroup.
    assert h.heartbeat(ids["b"], 3) == ErrorCode.NONE
