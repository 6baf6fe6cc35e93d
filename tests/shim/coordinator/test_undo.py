"""A classic coordinator call whose records are not written is put back (registry.undoable,
group.SavedGroup; the retention check keeps its own undo): for every kind of step that writes
records, from a state set up first, running the outcome's `undo` leaves the coordinator's
memory exactly as it was, in the same objects, and the same step then goes through again,
writing the same records. The broker-level path (the writer answering Kafka's coordinator
error) is tests/shim/testbroker/test_storage_faults.py's."""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.shim.coordinator.outcome import Outcome
from kafka_shim.shim.coordinator.state import GroupState
from kafka_shim.shim.coordinator.types import (
    CommitRequest,
    GroupSnapshot,
    GroupTimer,
    JoinRequest,
    MemberIdentity,
    MemberSnapshot,
    OffsetCommit,
    SyncRequest,
    TopicPartition,
    TxnCommitRequest,
)

from .harness import GROUP, RANGE, REBALANCE_MS, SESSION_MS, Harness, Reply
from .test_static_membership import static_stable_group

TP = TopicPartition("t", 0)
RETENTION_MS = 60_000


def memory(h: Harness) -> Any:
    """Everything the classic coordinator keeps, as values: each group's fields (its members'
    fields in place of the members; not the undo's own bookkeeping, `changed_members`) with the
    identity of the group and member objects, the offsets parked by open transactions, and
    whether retention is scheduled."""
    registry = h.coordinator._registry
    groups = {
        group_id: (
            id(group),
            {
                **{name: value for name, value in vars(group).items() if name != "changed_members"},
                "members": {mid: (id(m), vars(m)) for mid, m in group.members.items()},
            },
        )
        for group_id, group in registry.groups.items()
    }
    return copy.deepcopy((groups, vars(registry.transactional), registry.retention_scheduled))


# --- the states a step starts from ---------------------------------------------------------


def stable_one(h: Harness) -> str:
    return h.stable_group("a")["a"]


def joined_not_synced(h: Harness) -> None:
    h.join_new("a")
    assert h.state == GroupState.COMPLETING_REBALANCE


def follower_waiting_for_the_leader(h: Harness) -> None:
    """Two members in a new generation; the follower's SyncGroup waits for the leader's."""
    ids = {client: h.join_new(client)[0] for client in ("a", "b")}
    for client, member_id in ids.items():
        h.join(member_id, client=client)
    group = h.group()
    assert group.state == GroupState.COMPLETING_REBALANCE
    follower = next(m for m in group.members if m != group.leader_id)
    assert not h.sync(follower, group.generation_id).answered


def one_left_and_one_not_rejoined(h: Harness) -> None:
    """Stable a and b; a rejoins and then leaves: the rebalance waits for b until its deadline."""
    ids = h.stable_group("a", "b")
    h.join(ids["a"], client="a")
    h.apply(h.coordinator.leave_group(GROUP, [MemberIdentity(ids["a"])], h.now))
    assert h.state == GroupState.PREPARING_REBALANCE


def stable_with_one_not_joined_yet(h: Harness) -> None:
    """Stable a; b was handed its member id (MEMBER_ID_REQUIRED) and has not joined with it."""
    stable_one(h)
    assert h.join(client="b").value.error == ErrorCode.MEMBER_ID_REQUIRED
    assert h.group().pending_members


def empty_with_offsets_and_a_transaction(h: Harness) -> None:
    """An Empty group with a committed offset and a transactional one parked."""
    commit = CommitRequest(GROUP, {TP: OffsetCommit(5), TopicPartition("t", 1): OffsetCommit(6)})
    h.apply(h.coordinator.commit_offsets(commit, h.now))
    h.apply(h.coordinator.commit_transactional_offsets(txn_commit_request(9), h.now))


def txn_commit_request(offset: int, producer_id: int = 7) -> TxnCommitRequest:
    return TxnCommitRequest(GROUP, producer_id, 0, {TP: OffsetCommit(offset)})


# --- the steps: each answers its outcome, not carried out ----------------------------------


def only_member(h: Harness) -> str:
    return next(iter(h.group().members))


def static_restart(h: Harness) -> Outcome[Any]:
    request = JoinRequest(GROUP, "", SESSION_MS, REBALANCE_MS, "consumer", RANGE, "ib", "b", "/127.0.0.1")
    return h.coordinator.join_group(request, h.now, h.waiter(Reply()))


def leader_sync(h: Harness) -> Outcome[Any]:
    group = h.group()
    member = group.leader_id
    assert member is not None
    assignments = {member_id: member_id.encode() for member_id in group.members}
    request = SyncRequest(GROUP, group.generation_id, member, assignments=assignments)
    return h.coordinator.sync_group(request, h.now, h.waiter(Reply()))


def leave(h: Harness) -> Outcome[Any]:
    return h.coordinator.leave_group(GROUP, [MemberIdentity(only_member(h))], h.now)


def static_leave(h: Harness) -> Outcome[Any]:
    return h.coordinator.leave_group(GROUP, [MemberIdentity("", "ia"), MemberIdentity("", "ib")], h.now)


def deadline(kind: str, after_ms: int) -> Callable[[Harness], Outcome[Any]]:
    def fire(h: Harness) -> Outcome[Any]:
        member = only_member(h) if kind == "session" else ""
        return h.coordinator.on_timer(GroupTimer(kind, GROUP, member), h.now + after_ms)

    return fire


def release(h: Harness) -> Outcome[Any]:
    return h.coordinator.release_group(GROUP, h.now)


def adopt(h: Harness) -> Outcome[Any]:
    member = MemberSnapshot("c-1", None, "c", "/127.0.0.1", REBALANCE_MS, SESSION_MS, RANGE, b"pc")
    return h.coordinator.adopt_group(GroupSnapshot(GROUP, 4, "consumer", "range", (member,)), h.now)


def txn_commit(h: Harness) -> Outcome[Any]:
    return h.coordinator.commit_transactional_offsets(txn_commit_request(11), h.now)


def another_producer_txn_commit(h: Harness) -> Outcome[Any]:
    return h.coordinator.commit_transactional_offsets(txn_commit_request(12, producer_id=8), h.now)


def delete_offsets(h: Harness) -> Outcome[Any]:
    return h.coordinator.delete_offsets(GROUP, [TP, TopicPartition("t", 1)], h.now)


def delete_group(h: Harness) -> Outcome[Any]:
    return h.coordinator.delete_groups([GROUP], h.now)


def retention(h: Harness) -> Outcome[Any]:
    return h.coordinator.on_timer(GroupTimer("retention"), h.now + RETENTION_MS + 1)


@dataclass
class Case:
    name: str
    before: Callable[[Harness], object]
    step: Callable[[Harness], Outcome[Any]]
    config: dict[str, Any] | None = None  # CoordinatorConfig fields


CASES = [
    Case("a static member restarting in a Stable group", static_stable_group, static_restart),
    Case("the leader's sync", joined_not_synced, leader_sync),
    Case("the leader's sync answering the follower's", follower_waiting_for_the_leader, leader_sync),
    Case("the last member leaving", stable_one, leave),
    Case("static members leaving", static_stable_group, static_leave),
    Case("a session expiring", stable_one, deadline("session", SESSION_MS)),
    Case("a sync deadline (the rebalance timeout)", joined_not_synced, deadline("sync", REBALANCE_MS)),
    Case(
        "a join deadline (the rebalance timeout)",
        one_left_and_one_not_rejoined,
        deadline("join", REBALANCE_MS),
    ),
    Case("handing the group to a consumer group", static_stable_group, release),
    Case("handing over a group whose follower waits to sync", follower_waiting_for_the_leader, release),
    Case("handing over a group with a member not joined yet", stable_with_one_not_joined_yet, release),
    Case("taking a consumer group back", lambda h: None, adopt),
    Case("a transactional offset commit", empty_with_offsets_and_a_transaction, txn_commit),
    Case(
        "another producer's transactional offset commit",
        empty_with_offsets_and_a_transaction,
        another_producer_txn_commit,
    ),
    Case(
        "a plain commit superseding an open transaction's offset",
        empty_with_offsets_and_a_transaction,
        lambda h: h.coordinator.commit_offsets(CommitRequest(GROUP, {TP: OffsetCommit(10)}), h.now),
    ),
    Case("deleting offsets", empty_with_offsets_and_a_transaction, delete_offsets),
    Case(
        "deleting the last offsets buries the group",
        lambda h: h.apply(h.coordinator.commit_offsets(CommitRequest(GROUP, {TP: OffsetCommit(5)}), h.now)),
        delete_offsets,
        {"offset_delete_removes_empty_group": True},
    ),
    Case("deleting the group", empty_with_offsets_and_a_transaction, delete_group),
    Case(
        "retention expiring offsets and the group",
        empty_with_offsets_and_a_transaction,
        retention,
        {"offsets_retention_ms": RETENTION_MS},
    ),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_a_step_whose_records_are_not_written_leaves_memory_as_it_was(case: Case) -> None:
    h = Harness(**(case.config or {}))
    case.before(h)
    before = memory(h)
    failed = case.step(h)
    assert failed.records and failed.undo is not None, "the step writes records"
    assert memory(h) != before
    failed.undo()
    assert memory(h) == before
    again = case.step(h)
    assert [r.key for r in again.records] == [r.key for r in failed.records]
    assert again.response == failed.response


def test_a_put_back_group_goes_on_as_if_nothing_happened() -> None:
    """After a leader's sync is undone, the group still completes its rebalance, and a
    heartbeat finds the member in it."""
    h = Harness()
    joined_not_synced(h)
    member = only_member(h)
    leader_sync(h).undo()  # type: ignore[misc]
    answer = h.sync(member, h.group().generation_id, {member: b"p"})
    assert (answer.value.error, answer.value.assignment, h.state) == (ErrorCode.NONE, b"p", GroupState.STABLE)
    assert h.heartbeat(member, h.group().generation_id) == ErrorCode.NONE
