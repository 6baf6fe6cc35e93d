"""The broker's share partitions (Kafka's SharePartitionManager): each share group's
delivery state per topic-partition, read from the logs, written to `__share_group_state`.

The state machine is coordinator/share/partition.py; this module feeds it the stored batches
(as spans: control batches and, under read_committed, aborted transactions marked to skip),
initializes a share partition's start offset from share.auto.offset.reset on first use, and
writes the state of every share partition a call changed before that call answers (the
records share/state.py decides, as Kafka's share coordinator does: a ShareSnapshot or a
ShareUpdate).

Each call's change is an `Outcome` (coordinator/outcome.py): the state records, the share
partitions' lock deadlines, and an `undo`; the one writer (shim.effects.EffectWriter over
`__share_group_state`) carries it out as it does every coordinator's. Write, then change
memory: a call whose records cannot be written (a full disk) is put back as it was before it (a
copy of each share partition it touched, taken first: one partition's in-flight records, at
most share.partition.max.record.locks of them) and raises StorageError with the share
coordinator's error; their lock deadlines are set only once the records are written.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Hashable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import NamedTuple, TypeVar

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.protocol.records import iter_headers
from kafka_shim.protocol.share_state_records import SharePartitionKey
from kafka_shim.shim.coordinator.outcome import Outcome
from kafka_shim.shim.coordinator.share.config import (
    BY_DURATION,
    EARLIEST,
    ShareGroupConfig,
    parse_duration_ms,
)
from kafka_shim.shim.coordinator.share.partition import Acquired, BatchSpan, SharePartition, StateBatch
from kafka_shim.shim.effects import EffectWriter, coordinator_error
from kafka_shim.shim.share.state import KeptState, ShareStateShard
from kafka_shim.storage.errors import StorageError
from kafka_shim.storage.log import PartitionLog
from kafka_shim.storage.share_state_log import ShareStateLog

READ_BYTES = 1 << 20  # how much of a log one acquisition looks at for new batches


class ShareLockTimer(NamedTuple):
    """When the earliest acquisition lock of a share partition expires."""

    partition: SharePartitionKey

    @property
    def group_id(self) -> str:
        return self.partition.group_id


# Sets (at: ms) or cancels (None) a deadline of the broker's; the broker calls `expire` then.
Schedule = Callable[[Hashable, int | None], None]

R = TypeVar("R")


class _Kept(NamedTuple):
    """A share partition as it was before a call (None: it did not exist), and its state as
    last written, to put back if the call's records are not written."""

    partition: SharePartition | None
    state: KeptState


@dataclass
class Fetched:
    """What one partition answers a ShareFetch: its acquired ranges and the batches holding them."""

    acquired: list[Acquired]
    records: bytes


class SharePartitions:
    def __init__(
        self,
        state_log: ShareStateLog,
        config_of: Callable[[str], ShareGroupConfig],
        schedule: Schedule,
        clock: Callable[[], int],
        *,
        updates_per_snapshot: int = 500,
    ) -> None:
        self.state_log = state_log
        self.config_of = config_of
        # The one writer of coordinators' records; the lock deadlines go to `schedule`.
        self.writer = EffectWriter(state_log, clock, set_deadline=schedule)
        self._partitions: dict[SharePartitionKey, SharePartition] = {}
        # What each share partition's state writes (snapshot or update).
        self._state = ShareStateShard(updates_per_snapshot)

    def load(self) -> None:
        """Every share partition as its last snapshot and the updates after it left it;
        acquired records come back available."""
        for key, replayed in self.state_log.replay().items():
            state = replayed.fields
            batches = [StateBatch(*b.values()) for b in state["state_batches"]]
            partition = SharePartition.restored(state["start_offset"], batches)
            self._partitions[key] = partition
            self._state.loaded(key, partition, state["snapshot_epoch"], replayed.updates)

    def get(self, key: SharePartitionKey) -> SharePartition | None:
        return self._partitions.get(key)

    def of_group(self, group_id: str) -> Iterator[tuple[SharePartitionKey, SharePartition]]:
        return ((k, p) for k, p in list(self._partitions.items()) if k.group_id == group_id)

    def _open(self, key: SharePartitionKey, log: PartitionLog, now: int) -> SharePartition:
        partition = self._partitions.get(key)
        if partition is None:
            partition = self._partitions[key] = SharePartition(self._initial_offset(key.group_id, log, now))
        elif partition.start_offset < log.log_start_offset:  # retention or DeleteRecords passed it
            partition.move_start(log.log_start_offset)
        partition.release_expired(self.config_of(key.group_id).limits, now)
        return partition

    def _initial_offset(self, group_id: str, log: PartitionLog, now: int) -> int:
        reset = self.config_of(group_id).auto_offset_reset
        if reset == EARLIEST:
            return log.log_start_offset
        if reset.startswith(BY_DURATION):
            found = log.offset_for_timestamp(now - (parse_duration_ms(reset[len(BY_DURATION) :]) or 0))
            return log.high_watermark if found is None else found.offset
        return log.high_watermark

    # --- ShareFetch / ShareAcknowledge ----------------------------------------------------

    def acquire(
        self,
        key: SharePartitionKey,
        member_id: str,
        log: PartitionLog,
        max_records: int,
        now: int,
        *,
        strict: bool = False,
        max_bytes: int = READ_BYTES,
        min_one: bool = True,
    ) -> Fetched:
        """Acquire for `member_id`: released records, then new whole batches read from the log
        within `max_bytes` (with `min_one`, at least one batch however large: Kafka's
        minOneMessage for the first partition of a fetch that returns data)."""
        config = self.config_of(key.group_id)
        kept = self._keep([key])
        partition = self._open(key, log, now)
        spans = (
            _spans(log, partition.next_offset, config.read_committed, max_bytes, min_one)
            if partition.may_acquire_new(config.limits)
            else []
        )
        acquired = partition.acquire(member_id, spans, max_records, config.limits, now, strict=strict)
        self.writer.apply(self._changed([key], kept, None, now))
        return Fetched(acquired, _batches(log, acquired))

    def acknowledge(
        self,
        key: SharePartitionKey,
        member_id: str,
        log: PartitionLog,
        batches: Sequence[tuple[int, int, Sequence[int]]],
        now: int,
    ) -> ErrorCode:
        kept = self._keep([key])
        partition = self._open(key, log, now)
        error = partition.acknowledge(member_id, batches, self.config_of(key.group_id).limits, now)
        return self.writer.apply(self._changed([key], kept, error, now))

    def release_member(self, group_id: str, member_id: str, now: int) -> None:
        """A member left its group or closed its share session: its records return."""
        limits = self.config_of(group_id).limits
        group = list(self.of_group(group_id))
        kept = self._keep(key for key, _ in group)
        changed = [key for key, p in group if p.release_member(member_id, limits)]
        self.writer.apply(self._changed(changed, kept, None, now))

    def next_lock_deadline(self, keys: Sequence[SharePartitionKey]) -> int | None:
        deadlines = [d for k in keys if (p := self._partitions.get(k)) and (d := p.next_lock_deadline())]
        return min(deadlines, default=None)

    # --- admin ---------------------------------------------------------------------------

    def reset(self, key: SharePartitionKey, start_offset: int, now: int) -> None:
        """AlterShareGroupOffsets: the share partition starts afresh at `start_offset`."""
        kept = self._keep([key])
        self._partitions[key] = SharePartition(start_offset)
        self._state.start_afresh(key)
        self.writer.apply(self._changed([key], kept, None, now))

    def delete(self, keys: Sequence[SharePartitionKey], now: int) -> None:
        """DeleteShareGroupOffsets, DeleteGroups: the state goes (a tombstone each)."""
        present = [k for k in keys if k in self._partitions]
        kept = self._keep(present)
        for key in present:
            del self._partitions[key]
        tombstones = self._state.tombstones(present)
        timers = tuple((ShareLockTimer(key), None) for key in present)
        self.writer.apply(Outcome(None, tombstones, timers, undo=lambda: self._put_back(kept)))

    def delete_topics(self, topic_ids: Iterable[uuid.UUID], now: int) -> None:
        """Topics were deleted: every group's state of their partitions goes (a tombstone each),
        as Kafka's group coordinator deletes share state on onPartitionsDeleted; a topic
        created again under the name starts afresh (a new topic id)."""
        gone = set(topic_ids)
        self.delete([k for k in self._partitions if k.topic_id in gone], now)

    def expire(self, key: SharePartitionKey, now: int) -> None:
        """Its earliest lock's deadline passed: the expired locks return their records."""
        if key in self._partitions:
            kept = self._keep([key])
            self._partitions[key].release_expired(self.config_of(key.group_id).limits, now)
            self.writer.apply(self._changed([key], kept, None, now))

    # --- one call, one outcome ----------------------------------------------------------

    def _keep(self, keys: Iterable[SharePartitionKey]) -> dict[SharePartitionKey, _Kept]:
        """The share partitions `keys` as they are now, to put back if a call's records are not
        written."""
        return {
            key: _Kept(
                None if (p := self._partitions.get(key)) is None else p.copied(), self._state.kept(key)
            )
            for key in keys
        }

    def _put_back(self, kept: dict[SharePartitionKey, _Kept]) -> None:
        for key, (partition, state) in kept.items():
            if partition is None:
                self._partitions.pop(key, None)
            else:
                self._partitions[key] = partition
            self._state.put_back(key, state)

    def _changed(
        self, keys: Sequence[SharePartitionKey], kept: dict[SharePartitionKey, _Kept], response: R, now: int
    ) -> Outcome[R]:
        """A call changed share partitions `keys`: the state of each whose persisted state
        changed (a snapshot or an update: share.state); the deadline of each's earliest lock,
        which every change may move; and the undo that puts back `kept`."""
        records = self._state.records(((key, self._partitions[key]) for key in keys), now)
        timers = tuple((ShareLockTimer(key), self._partitions[key].next_lock_deadline()) for key in keys)
        return Outcome(response, tuple(records), timers, undo=lambda: self._put_back(kept))


def state_written(write: Callable[[], None]) -> ErrorCode:
    """NONE once `write` has changed share partitions; their code if it could not (they stay)."""
    try:
        write()
    except StorageError as exc:
        return state_not_written(exc)
    return ErrorCode.NONE


def state_not_written(exc: StorageError) -> ErrorCode:
    """What a share partition whose state could not be written answers, as in Kafka: its
    share coordinator answers the failed append NOT_COORDINATOR (`coordinator_error`), which
    SharePartition.fetchPersisterError turns into COORDINATOR_NOT_AVAILABLE; anything else
    into UNKNOWN_SERVER_ERROR. The share partition stays as it was."""
    code = coordinator_error(exc.code)
    if code in (ErrorCode.NOT_COORDINATOR, ErrorCode.COORDINATOR_NOT_AVAILABLE):
        return ErrorCode.COORDINATOR_NOT_AVAILABLE
    return ErrorCode.UNKNOWN_SERVER_ERROR


def _spans(
    log: PartitionLog, offset: int, read_committed: bool, max_bytes: int, min_one: bool
) -> list[BatchSpan]:
    """The stored batches from `offset` on within `max_bytes` (below the last stable offset
    under read_committed), control batches and aborted transactions' batches marked to skip."""
    if offset >= log.high_watermark:
        return []
    offset = max(offset, log.log_start_offset)
    limit = min(max_bytes, READ_BYTES)
    read = log.read_committed if read_committed else log.read
    data = read(offset, limit, min_one=min_one)
    if not data:
        return []
    headers = list(iter_headers(data))
    aborted = log.aborted_ranges(offset, headers[-1].last_offset + 1) if read_committed else []
    return [
        BatchSpan(
            h.base_offset,
            h.last_offset,
            h.is_control
            or (
                h.is_transactional
                and any(
                    a.producer_id == h.producer_id and a.first_offset <= h.base_offset <= a.last_offset
                    for a in aborted
                )
            ),
        )
        for h in headers
    ]


def _batches(log: PartitionLog, acquired: list[Acquired]) -> bytes:
    """The stored batches holding the acquired ranges, each once, in offset order."""
    chunks: dict[int, bytes] = {}
    for first, last, _ in acquired:
        data = log.read(first, READ_BYTES)
        for header in iter_headers(data):
            if header.base_offset > last:
                break
            chunks.setdefault(header.base_offset, data[header.position : header.end])
    return b"".join(chunks[k] for k in sorted(chunks))
