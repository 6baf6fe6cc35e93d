"""One call, one outcome: what the coordinator hands the broker, read directly."""

from __future__ import annotations

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.protocol.offsets_records import OffsetValue
from kafka_shim.shim.coordinator.config import CoordinatorConfig
from kafka_shim.shim.coordinator.coordinator import GroupCoordinator
from kafka_shim.shim.coordinator.outcome import Effects, Outcome
from kafka_shim.shim.coordinator.records import offset_record
from kafka_shim.shim.coordinator.types import (
    GroupTimer,
    JoinRequest,
    JoinResult,
    SyncRequest,
    SyncResult,
    TopicPartition,
)

from .harness import GROUP, RANGE, REBALANCE_MS, SESSION_MS

NOW = 1_000_000


def _join(member_id: str = "") -> JoinRequest:
    return JoinRequest(
        GROUP, member_id, SESSION_MS, REBALANCE_MS, "consumer", RANGE, require_known_member_id=False
    )


def test_a_zero_delay_join_is_answered_within_the_call() -> None:
    coordinator = GroupCoordinator(CoordinatorConfig(initial_rebalance_delay_ms=0), lambda prefix: "m")
    outcome = coordinator.join_group(_join(), NOW, "join-waiter")
    ((waiter, answer),) = outcome.replies
    assert waiter == "join-waiter" and isinstance(answer, JoinResult)
    assert (answer.error, answer.member_id, answer.leader, answer.generation_id) == (
        ErrorCode.NONE,
        "m",
        "m",
        1,
    )
    timers = dict(outcome.timers)
    assert timers[GroupTimer("join", GROUP)] is None  # set for now, fired in the call
    assert timers[GroupTimer("sync", GROUP)] == NOW + REBALANCE_MS
    assert timers[GroupTimer("session", GROUP, "m")] == NOW + SESSION_MS
    assert outcome.records == ()  # nothing is written before the leader's SyncGroup


def test_a_delayed_join_is_answered_by_the_deadline_and_the_sync_by_the_leader() -> None:
    coordinator = GroupCoordinator(CoordinatorConfig(initial_rebalance_delay_ms=100), lambda prefix: "m")
    waiting = coordinator.join_group(_join(), NOW, "join-waiter")
    assert waiting.replies == () and dict(waiting.timers)[GroupTimer("join", GROUP)] == NOW + 100
    fired = coordinator.on_timer(GroupTimer("join", GROUP), NOW + 100)
    assert [w for w, _ in fired.replies] == ["join-waiter"]
    synced = coordinator.sync_group(
        SyncRequest(GROUP, 1, "m", assignments={"m": b"a"}), NOW + 100, "sync-waiter"
    )
    assert synced.replies == (("sync-waiter", SyncResult(ErrorCode.NONE, "consumer", "range", b"a")),)
    assert len(synced.records) == 1  # the Stable generation's group metadata


def test_a_commits_outcome_equals_the_one_its_constructor_builds() -> None:
    # Effects.outcome builds it field by field without Outcome's __new__ (protocol.tuples).
    effects = Effects()
    record = offset_record("g", TopicPartition("t", 0), OffsetValue(5, -1, "", NOW))
    effects.records.append(record)
    effects.schedule("deadline", NOW + 1)
    built = effects.outcome("answer")
    assert built == Outcome("answer", (record,), (("deadline", NOW + 1),), (), None)
    assert built.markers == () and built.downgraded is None
