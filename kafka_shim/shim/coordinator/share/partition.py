"""One share partition's delivery state, as Kafka's SharePartition keeps it: pure and
clock-free (every call that can expire a lock takes `now`, in ms).

A share partition is a topic-partition as one share group consumes it. Records from the
start offset on are in flight; each is in one state:

| state        | event                                   | next state                           |
|--------------|-----------------------------------------|--------------------------------------|
| (new)        | acquired by a ShareFetch                | ACQUIRED, delivery count 1           |
| AVAILABLE    | acquired by a ShareFetch                | ACQUIRED, delivery count + 1         |
| ACQUIRED     | ACCEPT by its member                    | ACKNOWLEDGED                         |
| ACQUIRED     | REJECT, or GAP (no record there)        | ARCHIVED                             |
| ACQUIRED     | RELEASE, lock expiry, member gone       | AVAILABLE; ARCHIVED once the         |
|              |                                         | delivery count reached the limit     |
| ACQUIRED     | RENEW by its member                     | ACQUIRED, lock restarted             |

An acknowledgement of a record its member does not hold is INVALID_RECORD_STATE and
changes nothing for the partition. The start offset moves past every leading record that
is ACKNOWLEDGED or ARCHIVED; those leave the in-flight set. New records are acquired only
while fewer than share.partition.max.record.locks offsets are in flight; control batches
and (read_committed) aborted transactions are archived without being delivered.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from enum import IntEnum
from typing import NamedTuple

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.protocol.messages.share_fetch import ACCEPT, GAP, REJECT, RELEASE, RENEW


class RecordState(IntEnum):
    """Kafka's RecordState ids (the persisted ones: 0, 2, 4)."""

    AVAILABLE = 0
    ACQUIRED = 1
    ACKNOWLEDGED = 2
    ARCHIVED = 4


DONE = frozenset({RecordState.ACKNOWLEDGED, RecordState.ARCHIVED})


@dataclass
class InFlight:
    state: RecordState
    delivery_count: int
    member_id: str | None = None
    lock_deadline: int | None = None


class BatchSpan(NamedTuple):
    """A stored batch as acquisition sees it: its offsets, and whether it is never delivered
    (a control batch, or an aborted transaction's under read_committed)."""

    first: int
    last: int
    skip: bool = False


class Acquired(NamedTuple):
    first_offset: int
    last_offset: int
    delivery_count: int


class StateBatch(NamedTuple):
    """A run of offsets in one persisted state (__share_group_state's StateBatch)."""

    first_offset: int
    last_offset: int
    delivery_state: int
    delivery_count: int


@dataclass(frozen=True)
class PartitionLimits:
    lock_duration_ms: int = 30_000
    delivery_count_limit: int = 5
    max_record_locks: int = 2000
    # protocol.releases.Release.share_leaving_gives_back_deliveries
    leaving_gives_back_deliveries: bool = False


@dataclass
class SharePartition:
    start_offset: int
    next_offset: int = -1  # the first offset never acquired; -1: the start offset
    records: dict[int, InFlight] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.next_offset < self.start_offset:
            self.next_offset = self.start_offset

    def copied(self) -> SharePartition:
        """A copy that later changes of this one leave as it is."""
        records = {
            o: InFlight(r.state, r.delivery_count, r.member_id, r.lock_deadline)
            for o, r in self.records.items()
        }
        return SharePartition(self.start_offset, self.next_offset, records)

    # --- reads ----------------------------------------------------------------------------

    def in_flight(self) -> int:
        return self.next_offset - self.start_offset

    def completed(self) -> int:
        """Offsets at or past the start whose delivery is over (Kafka's DeliveryCompleteCount)."""
        return sum(1 for r in self.records.values() if r.state in DONE)

    def has_available(self) -> bool:
        return any(r.state is RecordState.AVAILABLE for r in self.records.values())

    def may_acquire_new(self, limits: PartitionLimits) -> bool:
        return self.in_flight() < limits.max_record_locks

    def next_lock_deadline(self) -> int | None:
        deadlines = [r.lock_deadline for r in self.records.values() if r.lock_deadline is not None]
        return min(deadlines, default=None)

    # --- acquisition -----------------------------------------------------------------------

    def acquire(
        self,
        member_id: str,
        spans: Iterable[BatchSpan],
        max_records: int,
        limits: PartitionLimits,
        now: int,
        *,
        strict: bool = False,
    ) -> list[Acquired]:
        """Acquire for `member_id`: released records first, then new whole batches from
        `spans` (the stored batches from `next_offset` on) while the in-flight limit allows.
        At least `max_records`, whole batches rounding up; `strict` (ShareAcquireMode
        record_limit): at most `max_records`."""
        taken: list[int] = []
        for offset in sorted(o for o, r in self.records.items() if r.state is RecordState.AVAILABLE):
            if len(taken) >= max_records:
                break
            self._lock(offset, self.records[offset], member_id, limits, now)
            taken.append(offset)
        for span in spans:
            if len(taken) >= max_records or not self.may_acquire_new(limits):
                break
            if span.last < self.next_offset:
                continue
            first = max(span.first, self.next_offset)
            if span.skip:
                self.next_offset = span.last + 1
                continue
            last = span.last
            if strict:
                last = min(last, first + max_records - len(taken) - 1)
            for offset in range(first, last + 1):
                record = self.records[offset] = InFlight(RecordState.AVAILABLE, 0)
                self._lock(offset, record, member_id, limits, now)
                taken.append(offset)
            self.next_offset = last + 1
        self._advance()
        return self._ranges(sorted(taken))

    def _lock(self, offset: int, record: InFlight, member_id: str, limits: PartitionLimits, now: int) -> None:
        record.state = RecordState.ACQUIRED
        record.delivery_count += 1
        record.member_id = member_id
        record.lock_deadline = now + limits.lock_duration_ms

    def _ranges(self, offsets: Sequence[int]) -> list[Acquired]:
        ranges: list[Acquired] = []
        for offset in offsets:
            count = self.records[offset].delivery_count
            if ranges and ranges[-1].last_offset == offset - 1 and ranges[-1].delivery_count == count:
                ranges[-1] = ranges[-1]._replace(last_offset=offset)
            else:
                ranges.append(Acquired(offset, offset, count))
        return ranges

    # --- acknowledgement and release ---------------------------------------------------------

    def acknowledge(
        self,
        member_id: str,
        batches: Sequence[tuple[int, int, Sequence[int]]],
        limits: PartitionLimits,
        now: int,
    ) -> ErrorCode:
        """Apply (first, last, types) acknowledgement batches of one partition, all or none:
        one type for the whole batch, or one per offset."""
        planned: list[tuple[int, int]] = []
        for first, last, types in batches:
            if last < first or len(types) not in (1, last - first + 1):
                return ErrorCode.INVALID_REQUEST
            for offset in range(first, last + 1):
                ack = types[0] if len(types) == 1 else types[offset - first]
                if ack not in (GAP, ACCEPT, RELEASE, REJECT, RENEW):
                    return ErrorCode.INVALID_REQUEST
                record = self.records.get(offset)
                if (
                    record is None
                    or record.state is not RecordState.ACQUIRED
                    or record.member_id != member_id
                ):
                    return ErrorCode.INVALID_RECORD_STATE
                planned.append((offset, ack))
        for offset, ack in planned:
            record = self.records[offset]
            if ack == RENEW:
                record.lock_deadline = now + limits.lock_duration_ms
            elif ack == ACCEPT:
                self._finish(record, RecordState.ACKNOWLEDGED)
            elif ack == RELEASE:
                self._release(record, limits)
            else:  # REJECT, GAP
                self._finish(record, RecordState.ARCHIVED)
        self._advance()
        return ErrorCode.NONE

    def _finish(self, record: InFlight, state: RecordState) -> None:
        record.state = state
        record.member_id = None
        record.lock_deadline = None

    def _release(self, record: InFlight, limits: PartitionLimits) -> None:
        spent = record.delivery_count >= limits.delivery_count_limit
        self._finish(record, RecordState.ARCHIVED if spent else RecordState.AVAILABLE)

    def release_expired(self, limits: PartitionLimits, now: int) -> bool:
        """Locks past their deadline return their records; whether any did."""
        expired = [r for r in self.records.values() if r.lock_deadline is not None and r.lock_deadline <= now]
        for record in expired:
            self._release(record, limits)
        self._advance()
        return bool(expired)

    def release_member(self, member_id: str, limits: PartitionLimits) -> bool:
        """A member that left (or closed its share session) gives back what it holds: as a
        release, or (`limits.leaving_gives_back_deliveries`, Kafka 4.1) as records fetched but
        never handled, their delivery counts given back and none archived for the limit."""
        held = [
            r for r in self.records.values() if r.state is RecordState.ACQUIRED and r.member_id == member_id
        ]
        for record in held:
            if limits.leaving_gives_back_deliveries:
                record.delivery_count -= 1
                self._finish(record, RecordState.AVAILABLE)
            else:
                self._release(record, limits)
        self._advance()
        return bool(held)

    def _advance(self) -> None:
        while self.start_offset < self.next_offset:
            record = self.records.get(self.start_offset)
            if record is not None and record.state not in DONE:
                break
            self.records.pop(self.start_offset, None)
            self.start_offset += 1

    def move_start(self, offset: int) -> None:
        """Start at `offset`: the log start moved past the start offset (retention, DeleteRecords),
        or AlterShareGroupOffsets reset it. Records below it are forgotten."""
        for below in [o for o in self.records if o < offset]:
            del self.records[below]
        self.next_offset = max(self.next_offset, offset)
        self.start_offset = offset
        self._advance()

    # --- persistence (__share_group_state) -------------------------------------------------

    def state_batches(self) -> list[StateBatch]:
        """The in-flight records as Kafka persists them: an acquired record is written as
        available (after a restart it is delivered again), with its delivery count."""
        batches: list[StateBatch] = []
        for offset in sorted(self.records):
            record = self.records[offset]
            state = RecordState.AVAILABLE if record.state is RecordState.ACQUIRED else record.state
            last = batches[-1] if batches else None
            if (
                last is not None
                and last.last_offset == offset - 1
                and (last.delivery_state, last.delivery_count) == (state, record.delivery_count)
            ):
                batches[-1] = last._replace(last_offset=offset)
            else:
                batches.append(StateBatch(offset, offset, int(state), record.delivery_count))
        return batches

    @classmethod
    def restored(cls, start_offset: int, batches: Iterable[StateBatch]) -> SharePartition:
        records = {
            offset: InFlight(RecordState(b.delivery_state), b.delivery_count)
            for b in batches
            for offset in range(max(b.first_offset, start_offset), b.last_offset + 1)
        }
        partition = cls(start_offset, max(records, default=start_offset - 1) + 1, records)
        partition._advance()
        return partition
