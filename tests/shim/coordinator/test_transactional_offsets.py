"""Transactional offset commits (TxnOffsetCommit) in the group coordinator: Kafka's
group fencing, offsets pending per producer until the transaction ends, OffsetFetch
require_stable, retention, deletion and replay with pending offsets. Fake clock only.
"""

from __future__ import annotations

from typing import NamedTuple

import pytest

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.protocol.offsets_records import GroupKey, OffsetKey, OffsetsRecord, OffsetValue
from kafka_shim.shim.coordinator.state import GroupState
from kafka_shim.shim.coordinator.types import (
    CommitRequest,
    FetchedOffset,
    OffsetCommit,
    TopicPartition,
    TxnCommitRequest,
)

from .harness import GROUP, Harness

T0 = TopicPartition("in", 0)
T1 = TopicPartition("in", 1)
PRODUCER = 4000
OTHER_PRODUCER = 4001
EPOCH = 3
UNSTABLE = FetchedOffset(error=ErrorCode.UNSTABLE_OFFSET_COMMIT)


def txn_commit(
    h: Harness,
    offsets: dict[TopicPartition, int],
    *,
    producer: int = PRODUCER,
    generation: int = -1,
    member: str = "",
    instance: str | None = None,
    group: str = GROUP,
    metadata: str = "",
) -> dict[TopicPartition, ErrorCode]:
    request = TxnCommitRequest(
        group,
        producer,
        EPOCH,
        {tp: OffsetCommit(o, 2, metadata) for tp, o in offsets.items()},
        generation,
        member,
        instance,
    )
    return h.apply(h.coordinator.commit_transactional_offsets(request, h.now))


def plain_commit(h: Harness, offsets: dict[TopicPartition, int]) -> None:
    request = CommitRequest(GROUP, {tp: OffsetCommit(o) for tp, o in offsets.items()})
    assert set(h.apply(h.coordinator.commit_offsets(request, h.now)).values()) == {ErrorCode.NONE}


def committed(h: Harness, tp: TopicPartition = T0, *, stable: bool = False) -> FetchedOffset:
    return h.coordinator.fetch_offsets(GROUP, [tp], require_stable=stable)[tp]


def static_stable_group(h: Harness) -> str:
    """A Stable generation-1 group of one static member (instance "ia"); its member id."""
    first = h.join(client="a", instance="ia")
    member = first.value.member_id
    h.advance(0)
    assert h.sync(member, 1, {member: b"p"}, instance="ia").value.error == ErrorCode.NONE
    return member


# --- fencing: what Kafka answers per request shape -------------------------------------------


class Fencing(NamedTuple):
    name: str
    generation: int
    member: str  # "<member>" is the group's static member, anything else used as given
    instance: str | None
    error: ErrorCode


FENCING = [
    Fencing("the current member and generation", 1, "<member>", "ia", ErrorCode.NONE),
    Fencing("an older generation", 0, "<member>", "ia", ErrorCode.ILLEGAL_GENERATION),
    Fencing("a newer generation", 2, "<member>", "ia", ErrorCode.ILLEGAL_GENERATION),
    Fencing("a member the group does not know", 1, "ghost", None, ErrorCode.UNKNOWN_MEMBER_ID),
    Fencing("an instance id held by another member id", 1, "zombie", "ia", ErrorCode.FENCED_INSTANCE_ID),
    Fencing("an instance id the group does not know", 1, "<member>", "ib", ErrorCode.UNKNOWN_MEMBER_ID),
    # v0-2 carry neither member nor generation: Kafka lets them through into any group.
    Fencing("no member and no generation", -1, "", None, ErrorCode.NONE),
    Fencing("a member id without generation", -1, "<member>", "ia", ErrorCode.ILLEGAL_GENERATION),
]


@pytest.mark.parametrize("case", FENCING, ids=lambda c: c.name)
def test_group_metadata_fencing(case: Fencing) -> None:
    h = Harness()
    member = static_stable_group(h)
    member_id = member if case.member == "<member>" else case.member
    errors = txn_commit(
        h, {T0: 5, T1: 6}, generation=case.generation, member=member_id, instance=case.instance
    )
    assert errors == {T0: case.error, T1: case.error}
    expected = UNSTABLE if case.error == ErrorCode.NONE else FetchedOffset()
    assert committed(h, stable=True) == expected


def test_a_member_completing_a_rebalance_may_commit_transactionally() -> None:
    # OffsetCommit answers REBALANCE_IN_PROGRESS here; Kafka's TxnOffsetCommit does not.
    h = Harness()
    first, _ = h.join_new("a")
    assert h.state == GroupState.COMPLETING_REBALANCE
    assert txn_commit(h, {T0: 5}, generation=1, member=first) == {T0: ErrorCode.NONE}


class NoGroup(NamedTuple):
    name: str
    group: str
    generation: int
    error: ErrorCode
    creates_group: bool


NO_GROUP = [
    NoGroup("an empty group id", "", -1, ErrorCode.INVALID_GROUP_ID, False),
    NoGroup("a generation of a group that is gone", GROUP, 1, ErrorCode.ILLEGAL_GENERATION, False),
    NoGroup("a standalone consumer", GROUP, -1, ErrorCode.NONE, True),
]


@pytest.mark.parametrize("case", NO_GROUP, ids=lambda c: c.name)
def test_commit_into_a_group_that_does_not_exist(case: NoGroup) -> None:
    h = Harness()
    assert txn_commit(h, {T0: 5}, group=case.group, generation=case.generation) == {T0: case.error}
    assert (h.coordinator.group(case.group) is not None) == case.creates_group
    if case.creates_group:
        assert h.state == GroupState.EMPTY


def test_oversized_metadata_fails_only_its_partition() -> None:
    h = Harness(offset_metadata_max_bytes=4)
    request = TxnCommitRequest(
        GROUP, PRODUCER, EPOCH, {T0: OffsetCommit(5, -1, "tiny"), T1: OffsetCommit(6, -1, "large")}
    )
    errors = h.apply(h.coordinator.commit_transactional_offsets(request, h.now))
    assert errors == {T0: ErrorCode.NONE, T1: ErrorCode.OFFSET_METADATA_TOO_LARGE}
    h.take_records()
    h.apply(h.coordinator.complete_transaction(PRODUCER, True, h.now))
    assert (committed(h, T0).offset, committed(h, T1).offset) == (5, -1)


# --- pending until the transaction ends ------------------------------------------------------


class Ending(NamedTuple):
    commit: bool
    visible: int


@pytest.mark.parametrize("ending", [Ending(True, 9), Ending(False, 4)], ids=["commit", "abort"])
def test_offsets_stay_pending_until_the_transaction_ends(ending: Ending) -> None:
    h = Harness()
    plain_commit(h, {T0: 4})
    assert txn_commit(h, {T0: 9, T1: 2}) == {T0: ErrorCode.NONE, T1: ErrorCode.NONE}
    # Without require_stable the committed offsets are answered, pending ones unseen.
    assert committed(h).offset == 4
    assert committed(h, T1) == FetchedOffset()
    assert committed(h, stable=True) == UNSTABLE
    assert committed(h, T1, stable=True) == UNSTABLE
    assert committed(h, TopicPartition("in", 7), stable=True) == FetchedOffset()

    h.advance(10)
    h.apply(h.coordinator.complete_transaction(PRODUCER, ending.commit, h.now))
    assert committed(h, stable=True).offset == ending.visible
    assert committed(h, stable=True).leader_epoch == (2 if ending.commit else -1)
    assert committed(h, T1, stable=True).offset == (2 if ending.commit else -1)


def test_fetching_every_partition_lists_committed_ones_only() -> None:
    h = Harness()
    plain_commit(h, {T0: 4})
    txn_commit(h, {T0: 9, T1: 2})
    assert h.coordinator.fetch_offsets(GROUP, None, require_stable=True) == {T0: UNSTABLE}
    assert h.coordinator.fetch_offsets(GROUP, None) == {T0: FetchedOffset(4, -1, "")}


def test_a_later_commit_of_the_same_producer_replaces_its_pending_offset() -> None:
    h = Harness()
    txn_commit(h, {T0: 5})
    txn_commit(h, {T0: 8})
    h.apply(h.coordinator.complete_transaction(PRODUCER, True, h.now))
    assert committed(h).offset == 8


def test_completing_an_unknown_producer_changes_nothing() -> None:
    h = Harness()
    plain_commit(h, {T0: 4})
    h.take_records()
    h.apply(h.coordinator.complete_transaction(999, True, h.now))
    assert committed(h, stable=True).offset == 4
    assert h.take_records() == []


def test_transactional_records_carry_the_producer_and_completion_writes_none() -> None:
    h = Harness()
    txn_commit(h, {T0: 9}, metadata="m")
    value = OffsetValue(9, 2, "m", h.now)
    assert h.take_records() == [OffsetsRecord(OffsetKey(GROUP, "in", 0), value, PRODUCER, EPOCH)]
    h.apply(h.coordinator.complete_transaction(PRODUCER, True, h.now))
    assert h.take_records() == []  # the marker in the log is the record of it


# --- the newest write wins, by log order (Kafka compares the records' offsets) ----------------


class Race(NamedTuple):
    name: str
    steps: tuple[str, ...]  # "plain:N", "txn:P:N", "commit:P"
    visible: int


P1, P2 = "1", "2"
RACES = [
    Race("a plain commit after the transactional one wins", ("txn:1:5", "plain:7", "commit:1"), 7),
    Race("a transactional commit after the plain one wins", ("plain:7", "txn:1:5", "commit:1"), 5),
    Race(
        "the later-written of two transactions wins when it commits first",
        ("txn:1:5", "txn:2:6", "commit:2", "commit:1"),
        6,
    ),
    Race(
        "the later-written of two transactions wins when it commits last",
        ("txn:1:5", "txn:2:6", "commit:1", "commit:2"),
        6,
    ),
    Race("a write after the other's commit wins", ("txn:1:5", "commit:1", "txn:2:3", "commit:2"), 3),
]


def run_steps(h: Harness, steps: tuple[str, ...]) -> None:
    for step in steps:
        kind, *args = step.split(":")
        if kind == "plain":
            plain_commit(h, {T0: int(args[0])})
        elif kind == "txn":
            txn_commit(h, {T0: int(args[1])}, producer=PRODUCER + int(args[0]))
        else:
            h.apply(h.coordinator.complete_transaction(PRODUCER + int(args[0]), True, h.now))


@pytest.mark.parametrize("race", RACES, ids=lambda r: r.name)
def test_newest_write_wins(race: Race) -> None:
    h = Harness()
    run_steps(h, race.steps)
    assert committed(h, stable=True).offset == race.visible


@pytest.mark.parametrize("race", RACES, ids=lambda r: r.name)
def test_newest_write_wins_across_a_restart_before_the_last_commit(race: Race) -> None:
    """The records up to the last step, replayed in log order, then the last commit."""
    h = Harness()
    log = h.log  # everything the coordinator's outcomes appended
    *before, last = race.steps
    run_steps(h, tuple(s for s in before if not s.startswith("commit")))
    after = Harness()
    # What the offsets log hands back: completed transactions applied, the others pending.
    after.apply(
        after.coordinator.load(_as_replayed(log, [s for s in before if s.startswith("commit")]), h.now)
    )
    run_steps(after, (last,))
    assert committed(after, stable=True).offset == race.visible


def _as_replayed(log: list[OffsetsRecord], commits: list[str]) -> list[OffsetsRecord]:
    done = {PRODUCER + int(step.split(":")[1]) for step in commits}
    return [r if r.producer_id not in done else OffsetsRecord(r.key, r.value) for r in log]


# --- retention and deletion with pending offsets ----------------------------------------------


def test_retention_spares_partitions_and_groups_with_open_transactions() -> None:
    h = Harness(offsets_retention_ms=60_000, offsets_retention_check_interval_ms=10_000)
    plain_commit(h, {T0: 4, T1: 5})
    txn_commit(h, {T0: 9})
    h.take_records()
    h.advance(70_000)
    # T1 expires; T0 waits for its transaction; the group lives on.
    assert h.take_records() == [OffsetsRecord(OffsetKey(GROUP, "in", 1), None)]
    assert committed(h).offset == 4
    h.apply(h.coordinator.complete_transaction(PRODUCER, False, h.now))
    h.advance(10_000)
    assert h.take_records() == [
        OffsetsRecord(OffsetKey(GROUP, "in", 0), None),
        OffsetsRecord(GroupKey(GROUP), None),
    ]
    assert h.coordinator.group(GROUP) is None


def test_a_group_with_only_pending_offsets_is_not_buried() -> None:
    h = Harness(offsets_retention_ms=60_000, offsets_retention_check_interval_ms=10_000)
    txn_commit(h, {T0: 9})
    h.advance(70_000)
    assert h.coordinator.group(GROUP) is not None
    h.apply(h.coordinator.complete_transaction(PRODUCER, True, h.now))
    assert committed(h).offset == 9


def test_deleting_the_group_drops_pending_offsets_with_tombstones() -> None:
    h = Harness()
    plain_commit(h, {T0: 4})
    txn_commit(h, {T0: 9, T1: 2})
    h.take_records()
    assert h.apply(h.coordinator.delete_groups([GROUP], h.now)) == {GROUP: ErrorCode.NONE}
    assert h.take_records() == [
        OffsetsRecord(OffsetKey(GROUP, "in", 0), None),
        OffsetsRecord(OffsetKey(GROUP, "in", 1), None),
        OffsetsRecord(GroupKey(GROUP), None),
    ]
    h.apply(h.coordinator.complete_transaction(PRODUCER, True, h.now))
    assert h.coordinator.group(GROUP) is None
    assert committed(h, stable=True) == FetchedOffset()


def test_offset_delete_drops_pending_offsets_of_those_partitions() -> None:
    h = Harness()
    plain_commit(h, {T0: 4})
    txn_commit(h, {T0: 9, T1: 2})
    h.take_records()
    error, errors = h.apply(h.coordinator.delete_offsets(GROUP, [T1], h.now))
    assert (error, errors) == (ErrorCode.NONE, {T1: ErrorCode.NONE})
    assert h.take_records() == [OffsetsRecord(OffsetKey(GROUP, "in", 1), None)]
    assert committed(h, T1, stable=True) == FetchedOffset()
    h.apply(h.coordinator.complete_transaction(PRODUCER, True, h.now))
    assert (committed(h).offset, committed(h, T1).offset) == (9, -1)


# --- replay -----------------------------------------------------------------------------------


def test_pending_offsets_come_back_pending_and_complete_after_a_restart() -> None:
    h = Harness()
    log = h.log  # everything the coordinator's outcomes appended
    plain_commit(h, {T0: 4})
    txn_commit(h, {T0: 9}, group="only-pending")
    txn_commit(h, {T0: 9})

    after = Harness()
    after.apply(after.coordinator.load(log, h.now))
    assert committed(after, stable=True) == UNSTABLE
    assert after.coordinator.fetch_offsets("only-pending", [T0], require_stable=True)[T0] == UNSTABLE
    only_pending = after.coordinator.group("only-pending")
    assert only_pending is not None and only_pending.state == GroupState.EMPTY
    after.apply(after.coordinator.complete_transaction(PRODUCER, True, h.now))
    assert committed(after).offset == 9
    assert after.coordinator.fetch_offsets("only-pending", [T0])[T0].offset == 9


def test_replayed_tombstone_drops_pending_offsets_before_it() -> None:
    h = Harness()
    key = OffsetKey(GROUP, "in", 0)
    log = [OffsetsRecord(key, OffsetValue(9, -1, "", h.now), PRODUCER, EPOCH), OffsetsRecord(key, None)]
    h.apply(h.coordinator.load(log, h.now))
    assert committed(h, stable=True) == FetchedOffset()
    h.apply(h.coordinator.complete_transaction(PRODUCER, True, h.now))
    assert committed(h) == FetchedOffset()
