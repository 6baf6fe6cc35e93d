"""The classic group's states, as sources outside this code describe them.

Every row is one request or deadline in one state, with the state and answer written out
literally as the source says. Each drives the real coordinator with the fake clock through
requests, then reads the state as DescribeGroups reports it; none consults the coordinator's
own transition table. Sources:
- seed 000 (keys961, "Kafka技术内幕-协调者(2)"), sections 2-7: the state x request table, from
  Kafka's GroupCoordinator.scala;
- seed 003 (5.4.3) and seed 004 (GroupMetadata.scala's transitions);
- apache/kafka group-coordinator ClassicGroupState.java: each state's actions and
  transitions in its javadoc, and `validPreviousStates` (KAFKA_MOVES below, written here);
- apache/kafka ClassicGroup.java `validateOffsetCommit` / `validateDeleteGroup`, and
  GroupCoordinator.scala `handleHeartbeat` / `onExpirePendingSync`, for the answers;
- DESIGN.md, "Group coordinator (classic protocol)".
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import NamedTuple

import pytest

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.shim.coordinator.types import (
    CommitRequest,
    JoinResult,
    MemberIdentity,
    OffsetCommit,
    Protocol,
    SyncResult,
    TopicPartition,
)
from tests.helpers import subscription

from .harness import GROUP, REBALANCE_MS, SESSION_MS, Harness, Reply

EMPTY, PREPARING, COMPLETING, STABLE, DEAD = (
    "Empty",
    "PreparingRebalance",
    "CompletingRebalance",
    "Stable",
    "Dead",
)
# ClassicGroupState.validPreviousStates: state -> the states a group may move to it from.
KAFKA_MOVES = {
    EMPTY: {PREPARING},
    PREPARING: {STABLE, COMPLETING, EMPTY},
    COMPLETING: {PREPARING},
    STABLE: {COMPLETING},
    DEAD: {STABLE, PREPARING, COMPLETING, EMPTY, DEAD},
}
# Kafka's moves into Dead from a group with members are its coordinator unloading the
# group's __consumer_offsets partition ("partition emigration"); this coordinator keeps
# every group it has, so only Empty groups die (deleted, or their offsets expired).
NOT_HERE = {(STABLE, DEAD), (PREPARING, DEAD), (COMPLETING, DEAD), (DEAD, DEAD)}

WAITING = "waiting"  # the request is held: no answer yet
Answer = ErrorCode | str | None  # an error code, WAITING, or None where nothing answers
T0 = TopicPartition("t", 0)
DELAY_MS = 3_000  # group.initial.rebalance.delay.ms, Kafka's default
RETENTION_MS = 60_000
RETENTION_CHECK_MS = 10_000
# The same assignor, subscribed to one more topic: new metadata, still a protocol all support.
NEW_METADATA = (Protocol("range", subscription("t", "u")),)


class Group(NamedTuple):
    h: Harness
    ids: dict[str, str]  # "leader" / "follower" / "member" -> member id


# --- groups in each state, made through requests ------------------------------------------


def _harness() -> Harness:
    return Harness(
        initial_rebalance_delay_ms=DELAY_MS,
        offsets_retention_ms=RETENTION_MS,
        offsets_retention_check_interval_ms=RETENTION_CHECK_MS,
    )


def _leader_and_follower(h: Harness, ids: dict[str, str]) -> dict[str, str]:
    leader = h.group().leader_id
    (follower,) = [m for m in ids.values() if m != leader]
    assert leader is not None
    return {"leader": leader, "follower": follower}


def empty_with_offsets() -> Group:
    """A standalone consumer (generation -1) committed: the group exists, Empty."""
    h = _harness()
    assert _commit(h, -1) == ErrorCode.NONE
    return Group(h, {})


def stable_alone() -> Group:
    """One member formed the group: Stable."""
    h = _harness()
    member, join = h.join_new("a")
    h.advance(DELAY_MS)
    h.sync(member, join.value.generation_id, {member: b"a"})
    return Group(h, {"member": member})


def empty_after_leave() -> Group:
    h, ids = stable_alone()
    h.apply(h.coordinator.leave_group(GROUP, [MemberIdentity(ids["member"])], h.now))
    return Group(h, ids)


def preparing_initial() -> Group:
    """A member joined an Empty group: the initial delay holds its JoinGroup."""
    h = _harness()
    member, _ = h.join_new("a")
    return Group(h, {"member": member})


def stable() -> Group:
    h = Harness()
    ids = h.stable_group("a", "b")
    return Group(h, _leader_and_follower(h, ids))


def preparing_rejoin() -> Group:
    """Stable, then the leader rejoined: the follower has yet to."""
    h, ids = stable()
    h.join(ids["leader"], client="leader")
    return Group(h, ids)


def completing() -> Group:
    """Every member rejoined and got its JoinGroup answer; nobody synced yet."""
    h, ids = stable()
    h.join(ids["leader"], client="leader")
    h.join(ids["follower"], client="follower")
    return Group(h, ids)


def dead() -> Group:
    h, ids = empty_after_leave()
    h.apply(h.coordinator.delete_groups([GROUP], h.now))
    return Group(h, ids)


# --- requests and deadlines -----------------------------------------------------------------


def _reply(reply: Reply[JoinResult] | Reply[SyncResult]) -> Answer:
    return reply.value.error if reply.answered else WAITING


def _generation(h: Harness) -> int:
    group = h.coordinator.group(GROUP)
    return 1 if group is None else group.generation_id


def _commit(h: Harness, generation: int, member: str = "") -> ErrorCode:
    request = CommitRequest(GROUP, {T0: OffsetCommit(7)}, generation, member)
    return h.apply(h.coordinator.commit_offsets(request, h.now))[T0]


def join_new(g: Group) -> Answer:
    first = g.h.join(client="new")
    assert first.value.error == ErrorCode.MEMBER_ID_REQUIRED
    return _reply(g.h.join(first.value.member_id, client="new"))


def rejoin(who: str, protocols: tuple[Protocol, ...] | None = None) -> Callable[[Group], Answer]:
    def act(g: Group) -> Answer:
        if protocols is None:
            return _reply(g.h.join(g.ids[who], client=who))
        return _reply(g.h.join(g.ids[who], client=who, protocols=protocols))

    return act


def sync(who: str) -> Callable[[Group], Answer]:
    def act(g: Group) -> Answer:
        member = g.ids[who]
        assignments = {m: m.encode() for m in g.ids.values()} if who == "leader" else None
        return _reply(g.h.sync(member, _generation(g.h), assignments))

    return act


def heartbeat(who: str) -> Callable[[Group], Answer]:
    return lambda g: g.h.heartbeat(g.ids[who], _generation(g.h))


def leave(*who: str) -> Callable[[Group], Answer]:
    def act(g: Group) -> Answer:
        identities = [MemberIdentity(g.ids[w]) for w in who]
        result = g.h.apply(g.h.coordinator.leave_group(GROUP, identities, g.h.now))
        return result.members[-1][1]

    return act


def commit(who: str) -> Callable[[Group], Answer]:
    return lambda g: _commit(g.h, _generation(g.h), g.ids[who])


def commit_standalone(g: Group) -> Answer:
    return _commit(g.h, -1)


def delete(g: Group) -> Answer:
    return g.h.apply(g.h.coordinator.delete_groups([GROUP], g.h.now))[GROUP]


def wait(ms: int) -> Callable[[Group], Answer]:
    def act(g: Group) -> Answer:
        g.h.advance(ms)
        return None

    return act


def _keep_alive(g: Group, members: tuple[str, ...], until_ms: int) -> None:
    """`members` heartbeat every half session until `until_ms` from now; others stay silent."""
    end = g.h.now + until_ms
    while g.h.now + SESSION_MS // 2 < end:
        g.h.advance(SESSION_MS // 2)
        for who in members:
            g.h.heartbeat(g.ids[who], _generation(g.h))
    g.h.advance(end - g.h.now)


def leader_session_expires(g: Group) -> Answer:
    _keep_alive(g, ("follower",), SESSION_MS + 1)
    return None


def follower_misses_rebalance_timeout(g: Group) -> Answer:
    """The follower heartbeats (alive) but never rejoins; its answer afterwards."""
    _keep_alive(g, ("follower",), REBALANCE_MS + 1)
    return g.h.heartbeat(g.ids["follower"], _generation(g.h))


def leader_never_syncs(g: Group) -> Answer:
    """Both heartbeat; the follower's SyncGroup waits, the leader sends none within the
    rebalance timeout. The answer the follower's SyncGroup gets."""
    waiting = g.h.sync(g.ids["follower"], _generation(g.h))
    assert not waiting.answered
    _keep_alive(g, ("leader", "follower"), REBALANCE_MS + 1)
    return _reply(waiting)


def follower_never_syncs(g: Group) -> Answer:
    """Stable after the leader's SyncGroup; the follower heartbeats but never syncs."""
    g.h.join(g.ids["leader"], client="leader")
    g.h.join(g.ids["follower"], client="follower")
    assert sync("leader")(g) == ErrorCode.NONE
    _keep_alive(g, ("leader", "follower"), REBALANCE_MS + 1)
    return None


# --- the table -------------------------------------------------------------------------------


class Case(NamedTuple):
    source: str
    start: str
    make: Callable[[], Group]
    what: str
    act: Callable[[Group], Answer]
    answer: Answer
    end: str
    via: tuple[str, ...] = ()  # states passed through within the one step

    def __str__(self) -> str:
        return f"{self.start}-{self.what}"


S0, S003, S004 = "seed 000", "seed 003", "seed 004"
CGS, CG, GC, DESIGN = "ClassicGroupState.java", "ClassicGroup.java", "GroupCoordinator.scala", "DESIGN.md"
CASES = (
    # JoinGroup (seed 000 sections 2-3)
    Case(S0 + " §2; " + CGS, EMPTY, empty_with_offsets, "join new member", join_new, WAITING, PREPARING),
    Case(S0 + " §2; " + CGS, EMPTY, empty_after_leave, "join new member", join_new, WAITING, PREPARING),
    Case(S0 + " §2; " + S003, STABLE, stable, "join new member", join_new, WAITING, PREPARING),
    Case(CGS + " Stable", STABLE, stable, "leader rejoins", rejoin("leader"), WAITING, PREPARING),
    Case(
        CGS + " Stable",
        STABLE,
        stable,
        "follower rejoins with new metadata",
        rejoin("follower", NEW_METADATA),
        WAITING,
        PREPARING,
    ),
    Case(
        S003 + " fig 5-21; " + CGS + " Stable",
        STABLE,
        stable,
        "follower rejoins unchanged",
        rejoin("follower"),
        ErrorCode.NONE,
        STABLE,
    ),
    Case(
        S0 + " §2; " + S003 + " ex 3",
        PREPARING,
        preparing_rejoin,
        "join new member",
        join_new,
        WAITING,
        PREPARING,
    ),
    Case(
        S0 + " §2; " + S003 + " ex 1",
        PREPARING,
        preparing_rejoin,
        "last member rejoins",
        rejoin("follower"),
        ErrorCode.NONE,
        COMPLETING,
    ),
    Case(
        S0 + " §2; " + CGS + " PreparingRebalance",
        PREPARING,
        preparing_initial,
        "initial delay passes",
        wait(DELAY_MS),
        None,
        COMPLETING,
    ),
    Case(S0 + " §3; " + CGS, COMPLETING, completing, "join new member", join_new, WAITING, PREPARING),
    Case(
        CGS + " CompletingRebalance",
        COMPLETING,
        completing,
        "member rejoins with new metadata",
        rejoin("follower", NEW_METADATA),
        WAITING,
        PREPARING,
    ),
    Case(
        S0 + " §3; " + S003 + " fig 5-21",
        COMPLETING,
        completing,
        "leader rejoins unchanged",
        rejoin("leader"),
        ErrorCode.NONE,
        COMPLETING,
    ),
    Case(
        S0 + " §3; " + CGS,
        DEAD,
        dead,
        "known member joins",
        rejoin("member"),
        ErrorCode.UNKNOWN_MEMBER_ID,
        DEAD,
    ),
    # SyncGroup (seed 000 section 4)
    Case(
        S0 + " §4; " + CGS,
        EMPTY,
        empty_after_leave,
        "sync",
        sync("member"),
        ErrorCode.UNKNOWN_MEMBER_ID,
        EMPTY,
    ),
    Case(S0 + " §4; " + CGS, STABLE, stable, "sync", sync("follower"), ErrorCode.NONE, STABLE),
    Case(
        S0 + " §4; " + CGS,
        PREPARING,
        preparing_rejoin,
        "sync",
        sync("follower"),
        ErrorCode.REBALANCE_IN_PROGRESS,
        PREPARING,
    ),
    Case(S0 + " §4; " + CGS, COMPLETING, completing, "follower syncs", sync("follower"), WAITING, COMPLETING),
    Case(S0 + " §4; " + CGS, COMPLETING, completing, "leader syncs", sync("leader"), ErrorCode.NONE, STABLE),
    Case(S0 + " §4; " + CGS, DEAD, dead, "sync", sync("member"), ErrorCode.UNKNOWN_MEMBER_ID, DEAD),
    # LeaveGroup (seed 000 section 5)
    Case(
        S0 + " §5; " + CGS,
        EMPTY,
        empty_after_leave,
        "leave",
        leave("member"),
        ErrorCode.UNKNOWN_MEMBER_ID,
        EMPTY,
    ),
    Case(S0 + " §5; " + CGS, DEAD, dead, "leave", leave("member"), ErrorCode.UNKNOWN_MEMBER_ID, DEAD),
    Case(S0 + " §5; " + CGS, STABLE, stable, "follower leaves", leave("follower"), ErrorCode.NONE, PREPARING),
    Case(
        S0 + " §5; " + CGS,
        COMPLETING,
        completing,
        "follower leaves",
        leave("follower"),
        ErrorCode.NONE,
        PREPARING,
    ),
    Case(
        S0 + " §5 (the delayed join may complete)",
        PREPARING,
        preparing_rejoin,
        "member yet to rejoin leaves",
        leave("follower"),
        ErrorCode.NONE,
        COMPLETING,
    ),
    Case(
        CGS + " PreparingRebalance; " + S004,
        PREPARING,
        preparing_rejoin,
        "every member leaves",
        leave("leader", "follower"),
        ErrorCode.NONE,
        EMPTY,
    ),
    Case(
        S0 + " §5; " + CGS,
        STABLE,
        stable_alone,
        "last member leaves",
        leave("member"),
        ErrorCode.NONE,
        EMPTY,
        via=(PREPARING,),
    ),
    # Heartbeat (seed 000 section 7.2; GroupCoordinator.scala handleHeartbeat)
    Case(
        S0 + " §7.2; " + CGS,
        EMPTY,
        empty_after_leave,
        "heartbeat",
        heartbeat("member"),
        ErrorCode.UNKNOWN_MEMBER_ID,
        EMPTY,
    ),
    Case(
        S0 + " §7.2; " + CGS,
        PREPARING,
        preparing_rejoin,
        "heartbeat",
        heartbeat("follower"),
        ErrorCode.REBALANCE_IN_PROGRESS,
        PREPARING,
    ),
    # Seed 000 and ClassicGroupState's javadoc say REBALANCE_IN_PROGRESS here; Kafka's
    # handleHeartbeat answers NONE since members heartbeat right after their JoinGroup.
    Case(
        GC + " handleHeartbeat",
        COMPLETING,
        completing,
        "heartbeat",
        heartbeat("follower"),
        ErrorCode.NONE,
        COMPLETING,
    ),
    Case(S0 + " §7.2; " + CGS, STABLE, stable, "heartbeat", heartbeat("follower"), ErrorCode.NONE, STABLE),
    Case(S0 + " §2; " + CGS, DEAD, dead, "heartbeat", heartbeat("member"), ErrorCode.UNKNOWN_MEMBER_ID, DEAD),
    # Deadlines (seed 000 sections 6, 7.3)
    Case(
        S0 + " §6-7.3; " + CGS + " Stable",
        STABLE,
        stable,
        "leader's session expires",
        leader_session_expires,
        None,
        PREPARING,
    ),
    Case(
        CGS + " CompletingRebalance",
        COMPLETING,
        completing,
        "leader's session expires",
        leader_session_expires,
        None,
        PREPARING,
    ),
    Case(
        S0 + " §6; " + CGS + " PreparingRebalance",
        PREPARING,
        preparing_rejoin,
        "rebalance timeout: follower dropped",
        follower_misses_rebalance_timeout,
        ErrorCode.UNKNOWN_MEMBER_ID,
        COMPLETING,
    ),
    Case(
        GC + " onExpirePendingSync",
        COMPLETING,
        completing,
        "leader never syncs",
        leader_never_syncs,
        ErrorCode.REBALANCE_IN_PROGRESS,
        PREPARING,
    ),
    Case(
        GC + " onExpirePendingSync",
        STABLE,
        stable,
        "follower never syncs",
        follower_never_syncs,
        None,
        PREPARING,
    ),
    Case(
        CGS + " Empty: last offsets removed by the periodic expiration",
        EMPTY,
        empty_with_offsets,
        "offsets expire",
        wait(RETENTION_MS + RETENTION_CHECK_MS),
        None,
        DEAD,
    ),
    # OffsetCommit (ClassicGroup.validateOffsetCommit; ClassicGroupState actions)
    Case(
        CG + "; " + DESIGN,
        EMPTY,
        empty_with_offsets,
        "standalone commit",
        commit_standalone,
        ErrorCode.NONE,
        EMPTY,
    ),
    Case(CG, EMPTY, empty_after_leave, "member commit", commit("member"), ErrorCode.UNKNOWN_MEMBER_ID, EMPTY),
    Case(
        CG + "; " + CGS,
        PREPARING,
        preparing_rejoin,
        "member commit",
        commit("follower"),
        ErrorCode.NONE,
        PREPARING,
    ),
    Case(
        CG + "; " + CGS,
        COMPLETING,
        completing,
        "member commit",
        commit("follower"),
        ErrorCode.REBALANCE_IN_PROGRESS,
        COMPLETING,
    ),
    Case(CG + "; " + CGS, STABLE, stable, "member commit", commit("follower"), ErrorCode.NONE, STABLE),
    # DeleteGroups (ClassicGroup.validateDeleteGroup; DESIGN.md)
    Case(CG + "; " + DESIGN, EMPTY, empty_with_offsets, "delete", delete, ErrorCode.NONE, DEAD),
    Case(CG + "; " + DESIGN, STABLE, stable, "delete", delete, ErrorCode.NON_EMPTY_GROUP, STABLE),
    Case(CG, PREPARING, preparing_rejoin, "delete", delete, ErrorCode.NON_EMPTY_GROUP, PREPARING),
    Case(CG, COMPLETING, completing, "delete", delete, ErrorCode.NON_EMPTY_GROUP, COMPLETING),
)


@pytest.mark.parametrize("case", CASES, ids=str)
def test_each_request_moves_the_group_as_kafka_does(case: Case) -> None:
    group = case.make()
    assert _state(group.h) == case.start
    assert case.act(group) == case.answer
    assert _state(group.h) == case.end


def _state(h: Harness) -> str:
    """The state DescribeGroups reports (Dead for a group that is gone)."""
    return h.coordinator.describe_group(GROUP).state


def _moves() -> set[tuple[str, str]]:
    moves = set()
    for case in CASES:
        path = (case.start, *case.via, case.end)
        moves |= {(a, b) for a, b in itertools.pairwise(path) if a != b}
    return moves


def test_every_move_in_the_table_is_one_kafka_allows() -> None:
    for before, after in _moves():
        assert before in KAFKA_MOVES[after], (before, after)


def test_every_move_kafka_allows_is_in_the_table() -> None:
    kafka = {(before, after) for after, befores in KAFKA_MOVES.items() for before in befores}
    assert _moves() == kafka - NOT_HERE


# --- what the moves carry (seed 000 section 4, GroupCoordinator.scala doSyncGroup) ---------


def test_leader_assignment_reaches_every_waiting_member_and_a_missing_one_gets_empty_bytes() -> None:
    h, ids = completing()
    follower = h.sync(ids["follower"], _generation(h))
    leader = h.sync(ids["leader"], _generation(h), {ids["leader"]: b"pa"})
    assert (leader.value.assignment, follower.value.assignment) == (b"pa", b"")
    assert follower.value.error == ErrorCode.NONE


def test_a_group_emptied_by_leaving_moves_to_a_new_generation() -> None:
    h, ids = stable_alone()
    assert h.group().generation_id == 1
    leave("member")(Group(h, ids))
    assert _state(h) == EMPTY and h.group().generation_id == 2  # Kafka's initNextGeneration
