"""Seed 000 sections 6-7: heartbeats, session expiry, pending members, sync expiry."""

from __future__ import annotations

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.shim.coordinator.state import GroupState
from kafka_shim.shim.coordinator.types import GroupTimer

from .harness import GROUP, REBALANCE_MS, SESSION_MS, Harness

S = GroupState


def test_heartbeat_errors() -> None:
    h = Harness()
    ids = h.stable_group("a", "b")
    assert h.heartbeat(ids["b"], 2) == ErrorCode.NONE
    assert h.heartbeat(ids["b"], 1) == ErrorCode.ILLEGAL_GENERATION
    assert h.heartbeat("ghost", 2) == ErrorCode.UNKNOWN_MEMBER_ID
    assert h.heartbeat(ids["b"], 2, group="other") == ErrorCode.UNKNOWN_MEMBER_ID


def test_heartbeats_keep_a_member_alive_past_its_session_timeout() -> None:
    h = Harness()
    ids = h.stable_group("a")
    for _ in range(5):
        h.advance(SESSION_MS - 1)
        assert h.heartbeat(ids["a"], 1) == ErrorCode.NONE
    assert h.state == S.STABLE


def test_session_expiry_removes_the_member_and_starts_a_rebalance() -> None:
    h = Harness()
    ids = h.stable_group("a", "b")
    h.advance(SESSION_MS - 1)
    assert h.heartbeat(ids["a"], 2) == ErrorCode.NONE  # a stays, b goes silent
    h.advance(1)
    assert ids["b"] not in h.group().members and h.state == S.PREPARING_REBALANCE
    assert h.heartbeat(ids["a"], 2) == ErrorCode.REBALANCE_IN_PROGRESS
    rejoin = h.join(ids["a"], client="a")
    assert rejoin.value.generation_id == 3 and len(rejoin.value.members) == 1


def test_last_member_expiring_leaves_an_empty_group() -> None:
    h = Harness()
    h.stable_group("a")
    h.advance(SESSION_MS)
    assert h.state == S.EMPTY and h.group().members == {}


def test_member_waiting_for_the_leader_does_not_expire() -> None:
    h = Harness()
    a, _ = h.join_new("a")
    b, _ = h.join_new("b")
    generation = h.join(a, client="a").value.generation_id
    waiting = h.sync(b, generation)
    for _ in range(5):  # the leader assigns slowly but heartbeats; b only waits
        assert h.heartbeat(a, generation) == ErrorCode.NONE
        h.advance(5000)
    # b is far beyond its session timeout, but waiting on the leader counts as alive.
    assert b in h.group().members and not waiting.answered


def test_expired_pending_member_id_is_forgotten() -> None:
    h = Harness()
    h.stable_group("a")
    pending = h.join(client="b").value.member_id
    h.advance(SESSION_MS)
    assert pending not in h.group().pending_members
    assert h.join(pending, client="b").value.error == ErrorCode.UNKNOWN_MEMBER_ID


def test_member_that_never_syncs_is_removed_after_the_rebalance_timeout() -> None:
    h = Harness()
    a, _ = h.join_new("a")
    b, _ = h.join_new("b")
    generation = h.join(a, client="a").value.generation_id
    h.sync(a, generation, {a: b"pa", b: b"pb"})
    assert h.state == S.STABLE
    for _ in range(REBALANCE_MS // 5000):  # a heartbeats; b never sends SyncGroup
        h.heartbeat(a, generation)
        h.heartbeat(b, generation)
        h.advance(5000)
    assert b not in h.group().members and h.state == S.PREPARING_REBALANCE


def test_outcomes_set_the_session_deadline_as_the_earliest() -> None:
    h = Harness()
    assert h.deadlines.earliest() is None
    ids = h.stable_group("a")
    assert h.deadlines.earliest() == h.now + SESSION_MS
    assert h.deadlines.at(GroupTimer("session", GROUP, ids["a"])) == h.now + SESSION_MS
