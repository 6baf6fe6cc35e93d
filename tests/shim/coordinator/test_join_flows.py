"""Seed 003: the three join examples and the two flows where a JoinGroup response was lost."""

from __future__ import annotations

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.shim.coordinator.state import GroupState
from kafka_shim.shim.coordinator.types import Protocol

from .harness import Harness

S = GroupState


def test_example_1_two_consumers_join_one_after_the_other() -> None:
    """Stable -> PreparingRebalance -> CompletingRebalance -> Stable, once per consumer."""
    h = Harness()
    c1, c1_join = h.join_new("c1")
    assert h.state == S.COMPLETING_REBALANCE and c1_join.value.generation_id == 1
    h.sync(c1, 1, {c1: b"all"})
    assert h.state == S.STABLE

    c2, c2_join = h.join_new("c2")  # enters from Stable: a delayed join that cannot complete yet
    assert h.state == S.PREPARING_REBALANCE and not c2_join.answered
    c1_rejoin = h.join(c1, client="c1")  # enters from PreparingRebalance and completes it
    assert h.state == S.COMPLETING_REBALANCE
    assert c1_rejoin.value.generation_id == c2_join.value.generation_id == 2
    assert c1_rejoin.value.leader == c2_join.value.leader == c1
    h.sync(c2, 2)
    h.sync(c1, 2, {c1: b"p0", c2: b"p1"})
    assert h.state == S.STABLE


def test_example_2_second_consumer_joins_while_completing() -> None:
    """C1 has its JoinGroup answer (CompletingRebalance) when C2 joins: one more rebalance."""
    h = Harness()
    c1, _ = h.join_new("c1")
    assert h.state == S.COMPLETING_REBALANCE
    _c2, c2_join = h.join_new("c2")
    assert h.state == S.PREPARING_REBALANCE and not c2_join.answered
    c1_rejoin = h.join(c1, client="c1")
    assert h.state == S.COMPLETING_REBALANCE
    assert c1_rejoin.value.generation_id == c2_join.value.generation_id == 2


def test_example_3_third_consumer_enters_preparing_without_changing_state() -> None:
    h = Harness()
    c1, _ = h.join_new("c1")
    c2, c2_join = h.join_new("c2")
    c3, c3_join = h.join_new("c3")
    assert h.state == S.PREPARING_REBALANCE
    assert not c2_join.answered and not c3_join.answered
    c1_rejoin = h.join(c1, client="c1")
    assert h.state == S.COMPLETING_REBALANCE
    generation = {r.value.generation_id for r in (c1_rejoin, c2_join, c3_join)}
    assert generation == {2}
    assert [m.member_id for m in c1_rejoin.value.members] == [c1, c2, c3]
    assert c2_join.value.members == () and c3_join.value.members == ()


def test_figure_5_18_right_new_consumer_after_old_one_rejoined_enters_completing() -> None:
    h = Harness()
    c1, _ = h.join_new("c1")
    _c2, _ = h.join_new("c2")
    h.join(c1, client="c1")  # the old consumer completes the rebalance first
    assert h.state == S.COMPLETING_REBALANCE
    _, c3_join = h.join_new("c3")  # so the new one enters from CompletingRebalance
    assert h.state == S.PREPARING_REBALANCE and not c3_join.answered


def three_member_generation(h: Harness) -> tuple[str, str, str]:
    ids = [h.join_new(c)[0] for c in ("c1", "c2", "c3")]
    h.join(ids[0], client="c1")
    assert h.state == S.COMPLETING_REBALANCE and h.group().leader_id == ids[0]
    return ids[0], ids[1], ids[2]


def test_follower_missed_join_response_gets_it_again_in_stable() -> None:
    h = Harness()
    leader, follower, lost = three_member_generation(h)
    generation = h.group().generation_id
    # (3) the follower that got its response syncs and waits; (4) the leader assigns.
    waiting = h.sync(follower, generation)
    assert not waiting.answered
    leader_sync = h.sync(leader, generation, {leader: b"a", follower: b"b", lost: b"c"})
    # (5) both with a pending sync are answered; the third never asked.
    assert h.state == S.STABLE
    assert (leader_sync.value.assignment, waiting.value.assignment) == (b"a", b"b")
    # (6)-(7) the third resends JoinGroup: the group is Stable, it is answered at once.
    rejoin = h.join(lost, client="c3")
    assert h.state == S.STABLE
    result = rejoin.value
    assert (result.error, result.generation_id, result.leader, result.members) == (
        ErrorCode.NONE,
        generation,
        leader,
        (),
    )
    # (8)-(9) its SyncGroup in Stable returns the stored assignment at once.
    assert h.sync(lost, generation).value.assignment == b"c"
    assert h.group().generation_id == generation


def test_leader_missed_join_response_gets_it_again_in_completing() -> None:
    h = Harness()
    leader, f1, f2 = three_member_generation(h)
    generation = h.group().generation_id
    s1, s2 = h.sync(f1, generation), h.sync(f2, generation)  # followers wait for the leader
    assert not s1.answered and not s2.answered
    rejoin = h.join(leader, client="c1")  # same metadata: an answer again, no new rebalance
    assert h.state == S.COMPLETING_REBALANCE
    assert rejoin.value.generation_id == generation and rejoin.value.leader == leader
    assert [m.member_id for m in rejoin.value.members] == [leader, f1, f2]  # the leader gets them
    h.sync(leader, generation, {leader: b"a", f1: b"b", f2: b"c"})
    assert h.state == S.STABLE
    assert (s1.value.assignment, s2.value.assignment) == (b"b", b"c")


def test_rejoin_in_completing_with_changed_metadata_rebalances() -> None:
    h = Harness()
    _leader, follower, _ = three_member_generation(h)
    changed = h.join(follower, client="c2", protocols=(Protocol("range", b"new"),))
    assert h.state == S.PREPARING_REBALANCE and not changed.answered


def test_leader_rejoin_in_stable_forces_rebalance_follower_rejoin_does_not() -> None:
    h = Harness()
    ids = h.stable_group("a", "b")
    same = h.join(ids["b"], client="b")
    assert same.value.generation_id == 2 and h.state == S.STABLE
    h.join(ids["a"], client="a")
    assert h.state == S.PREPARING_REBALANCE
