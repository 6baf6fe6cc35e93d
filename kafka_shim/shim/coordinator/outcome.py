"""A group coordinator call's one output, and the builder a call fills in.

Both coordinators are pure: a call changes their state and returns what the broker must
then do, in this order: append the records to `__consumer_offsets` (under the fsync
policy), set or cancel the deadlines, and deliver the answers. `response` answers the
call itself; `replies` answer requests that wait elsewhere (a JoinGroup or SyncGroup
completed by another member's request or by a deadline), each named by the `Waiter` its
request brought. The KIP-848 and share-group coordinators answer it too, without replies;
one of theirs may hand a group back to the classic coordinator (`downgraded`). The
transaction coordinator answers an Outcome too (its records for `__transaction_state`, the
transaction markers to write), and so do the share partitions (records for
`__share_group_state`): one writer carries out every one of them (shim/groups/effects.py).

Write, then change memory: a call that emits records also returns `undo`, which puts the
coordinator back as it was before the call. The writer runs it when the append fails (a
full disk), and carries out nothing else of the outcome, so memory never runs ahead of
the log. A KIP-848 or share group's outcome brings none: the log holds the whole of those
groups, so the writer rebuilds them from it instead (coordinator/consumer/replayed.py), as
Kafka's runtime reverts a shard to its last committed state.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Any, Generic, NamedTuple, TypeVar

from kafka_shim.protocol.offsets_records import OffsetsRecord
from kafka_shim.protocol.tuples import fields_given, new_tuple
from kafka_shim.shim.coordinator.types import GroupSnapshot, TopicPartition

T = TypeVar("T")

# Names a request waiting for its answer; chosen by whoever delivers the answer.
Waiter = Hashable


class TransactionMarkers(NamedTuple):
    """A transaction's COMMIT or ABORT markers to write to its partitions, with the producer
    id and epoch it ends under (the transaction coordinator's outcome brings them)."""

    transactional_id: str
    producer_id: int
    producer_epoch: int
    commit: bool
    partitions: frozenset[TopicPartition]


class Outcome(NamedTuple, Generic[T]):
    response: T
    # The records of the coordinator's own internal topic: OffsetsRecord (__consumer_offsets),
    # TransactionRecord (__transaction_state) or ShareStateRecord (__share_group_state).
    records: tuple[Any, ...] = ()
    timers: tuple[tuple[Hashable, int | None], ...] = ()  # key -> deadline (ms), None cancels
    replies: tuple[tuple[Waiter, object], ...] = ()
    undo: Callable[[], None] | None = None
    # Markers to write once the records are (the transaction coordinator's).
    markers: tuple[TransactionMarkers, ...] = ()
    # A consumer group that became classic again (KIP-848's online downgrade): the classic
    # coordinator takes these members, once the records are written.
    downgraded: GroupSnapshot | None = None


_OUTCOME_FIELDS = ("response", "records", "timers", "replies", "undo", "markers", "downgraded")
fields_given(Outcome, *_OUTCOME_FIELDS)  # what Effects.outcome builds


class Effects:
    """What a call has produced so far. A deadline set twice keeps its last setting; one set
    and then fired or cancelled within the call ends up cancelled."""

    def __init__(self) -> None:
        self.records: list[OffsetsRecord] = []
        self.timers: dict[Hashable, int | None] = {}
        self.replies: list[tuple[Waiter, object]] = []
        self.undo: Callable[[], None] | None = None

    def schedule(self, key: Hashable, at: int) -> None:
        timers = self.timers
        if timers:  # keep the order deadlines were last set in (a heartbeat sets its first)
            timers.pop(key, None)
        timers[key] = at

    def cancel(self, key: Hashable) -> None:
        self.timers.pop(key, None)
        self.timers[key] = None

    def reply(self, waiter: Waiter, answer: object) -> None:
        self.replies.append((waiter, answer))

    def due(self, now: int) -> Hashable | None:
        """A deadline this call set at or before `now`, now cancelled (the caller fires it)."""
        for key, at in self.timers.items():
            if at is not None and at <= now:
                self.cancel(key)
                return key
        return None

    def outcome(self, response: T) -> Outcome[T]:
        if not self.records and not self.replies:  # a heartbeat's: its deadlines at most
            return Outcome(response, (), tuple(self.timers.items()))
        # Outcome(...) without its Python __new__ (every commit's): all of _OUTCOME_FIELDS.
        fields = (
            response,
            tuple(self.records),
            tuple(self.timers.items()),
            tuple(self.replies),
            self.undo if self.records else None,
            (),  # markers
            None,  # downgraded
        )
        return new_tuple(Outcome, fields)
