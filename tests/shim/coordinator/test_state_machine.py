"""Seed 000, section 2-4: the group's state x request table, and Kafka's valid transitions."""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import pytest

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.shim.coordinator import (
    CommitRequest,
    GroupState,
    MemberIdentity,
    OffsetCommit,
    TopicPartition,
)
from kafka_shim.shim.coordinator.state import TRANSITIONS, Event, IllegalTransition, next_state

from .harness import GROUP, Harness

S = GroupState
# Kafka's ClassicGroupState: the moves it allows (Dead from every state; this broker only
# kills Empty groups, as it never unloads a partition).
KAFKA_ALLOWS = {
    (S.PREPARING_REBALANCE, S.COMPLETING_REBALANCE),
    (S.COMPLETING_REBALANCE, S.STABLE),
    (S.STABLE, S.PREPARING_REBALANCE),
    (S.COMPLETING_REBALANCE, S.PREPARING_REBALANCE),
    (S.EMPTY, S.PREPARING_REBALANCE),
    (S.PREPARING_REBALANCE, S.EMPTY),
} | {(s, S.DEAD) for s in S}
ROWS = {(t.state, t.event) for t in TRANSITIONS}


def test_every_row_of_the_table_is_a_move_kafka_allows() -> None:
    assert len(ROWS) == len(TRANSITIONS)  # one row per (state, event)
    for row in TRANSITIONS:
        assert (row.state, row.next) in KAFKA_ALLOWS, row
        assert next_state("g", row.state, row.event) == row.next


@pytest.mark.parametrize("state", list(S), ids=lambda s: s.value)
@pytest.mark.parametrize("event", list(Event), ids=lambda e: e.name)
def test_an_event_the_table_has_no_row_for_is_refused(state: S, event: Event) -> None:
    if (state, event) in ROWS:
        return
    with pytest.raises(IllegalTransition):
        next_state("g", state, event)


# --- each row of the table, driven through requests and the fake clock --------------------

T0 = TopicPartition("t", 0)
DELAY_MS = 3_000


def _empty() -> tuple[Harness, dict[str, str]]:
    h = Harness(initial_rebalance_delay_ms=DELAY_MS)
    assert h.apply(h.coordinator.commit_offsets(CommitRequest(GROUP, {T0: OffsetCommit(1)}), h.now)) == {
        T0: ErrorCode.NONE
    }
    return h, {}


def _stable() -> tuple[Harness, dict[str, str]]:
    h = Harness()
    return h, h.stable_group("a", "b")


def _completing() -> tuple[Harness, dict[str, str]]:
    """Generation 2 of a and b, answered, nobody synced yet."""
    h = Harness()
    a, _ = h.join_new("a")
    b, _ = h.join_new("b")  # a must rejoin
    h.join(a, client="a")
    return h, {"a": a, "b": b}


def _preparing_after_leader_rejoined() -> tuple[Harness, dict[str, str]]:
    h, ids = _stable()
    h.join(ids["a"], client="a")  # the leader's rejoin starts a rebalance; b has not rejoined
    return h, ids


def _preparing_initial_delay_emptied() -> tuple[Harness, dict[str, str]]:
    """A group forming from Empty whose only member left within the initial delay."""
    h, _ = _empty()
    a, _ = h.join_new("a")
    h.apply(h.coordinator.leave_group(GROUP, [MemberIdentity(a)], h.now))
    return h, {}


def _leave(member: str) -> Callable[[Harness, dict[str, str]], None]:
    def fire(h: Harness, ids: dict[str, str]) -> None:
        h.apply(h.coordinator.leave_group(GROUP, [MemberIdentity(ids[member])], h.now))

    return fire


def _leader_syncs(h: Harness, ids: dict[str, str]) -> None:
    group = h.group()
    assert group.leader_id is not None
    h.sync(group.leader_id, group.generation_id, {m: b"x" for m in group.members})


def _delete(h: Harness, ids: dict[str, str]) -> None:
    assert h.apply(h.coordinator.delete_groups([GROUP], h.now)) == {GROUP: ErrorCode.NONE}


class Scenario(NamedTuple):
    state: S
    event: Event
    setup: Callable[[], tuple[Harness, dict[str, str]]]
    fire: Callable[[Harness, dict[str, str]], object]


SCENARIOS = (
    Scenario(S.EMPTY, Event.MEMBERS_CHANGED, _empty, lambda h, ids: h.join_new("z")),
    Scenario(S.STABLE, Event.MEMBERS_CHANGED, _stable, lambda h, ids: h.join_new("c")),
    Scenario(
        S.COMPLETING_REBALANCE,
        Event.MEMBERS_CHANGED,
        _completing,
        lambda h, ids: h.join_new("c"),
    ),
    Scenario(S.STABLE, Event.MEMBER_REMOVED, _stable, _leave("b")),
    Scenario(S.COMPLETING_REBALANCE, Event.MEMBER_REMOVED, _completing, _leave("b")),
    Scenario(
        S.PREPARING_REBALANCE,
        Event.JOIN_COMPLETED,
        _preparing_after_leader_rejoined,
        lambda h, ids: h.join(ids["b"], client="b"),
    ),
    Scenario(
        S.PREPARING_REBALANCE,
        Event.JOIN_COMPLETED_EMPTY,
        _preparing_initial_delay_emptied,
        lambda h, ids: h.advance(DELAY_MS),
    ),
    Scenario(S.COMPLETING_REBALANCE, Event.LEADER_SYNCED, _completing, _leader_syncs),
    Scenario(S.EMPTY, Event.GROUP_DELETED, _empty, _delete),
)


def test_every_row_has_a_scenario() -> None:
    assert {(s.state, s.event) for s in SCENARIOS} == ROWS


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda s: f"{s.state.value}-{s.event.name}")
def test_each_row_moves_the_group_as_the_table_says(scenario: Scenario) -> None:
    h, ids = scenario.setup()
    assert h.state == scenario.state
    scenario.fire(h, ids)
    expected = next_state(GROUP, scenario.state, scenario.event)
    if expected == S.DEAD:
        assert h.coordinator.group(GROUP) is None and h.coordinator.describe_group(GROUP).state == "Dead"
    else:
        assert h.state == expected


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
    h.apply(h.coordinator.leave_group(GROUP, [MemberIdentity(ids["a"])], h.now))
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
    h.apply(h.coordinator.leave_group(GROUP, [MemberIdentity(ids["a"])], h.now))
    assert h.apply(h.coordinator.delete_groups([GROUP], h.now)) == {GROUP: ErrorCode.NONE}
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
    result = h.apply(h.coordinator.leave_group(GROUP, [MemberIdentity(ids["b"])], h.now))
    assert result.members[0][1] == ErrorCode.NONE
    assert h.state == S.PREPARING_REBALANCE
    assert ids["b"] not in h.group().members


def test_leave_in_preparing_completes_the_delayed_join() -> None:
    h = Harness()
    ids = h.stable_group("a", "b")
    waiting = h.join(ids["a"], client="a")
    assert not waiting.answered
    h.apply(h.coordinator.leave_group(GROUP, [MemberIdentity(ids["b"])], h.now))
    assert h.state == S.COMPLETING_REBALANCE
    assert waiting.value.generation_id == 3 and [m.member_id for m in waiting.value.members] == [ids["a"]]


def test_last_member_leaving_empties_the_group_with_a_new_generation() -> None:
    h = Harness()
    ids = h.stable_group("a")
    h.apply(h.coordinator.leave_group(GROUP, [MemberIdentity(ids["a"])], h.now))
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
