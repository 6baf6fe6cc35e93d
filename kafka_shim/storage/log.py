"""The partition log interface: what handlers may ask of one topic-partition.

Batches are stored exactly as produced except for `baseOffset`, which the log
assigns. `append` and `write_txn_marker` are templates shared by every implementation
(idempotence and transaction checks, offset assignment, the append hook); an
implementation provides `_write`, the reads and where aborted transactions are
kept (`_write_marker`, `aborted_ranges`). The two implementations are the in-memory
`storage.memory.MemoryLog` and the durable segment log `storage.disk_log.DiskLog`.
"""

from __future__ import annotations

import threading
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass
from typing import NamedTuple

from kafka_shim.protocol.control_records import EndTxnMarker, build_marker_batch
from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.protocol.file_records import FileRecords
from kafka_shim.protocol.record_codec import decode_batch
from kafka_shim.protocol.records import RecordBatches, iter_headers, read_header
from kafka_shim.protocol.tuples import fields_given, new_tuple
from kafka_shim.storage.errors import StorageError
from kafka_shim.storage.log_config import LogConfig
from kafka_shim.storage.producer_state import LastRecord, ProducerStates
from kafka_shim.storage.txn_index import AbortedTxn

# Called with the log that grew, so only Fetches waiting on it are woken.
AppendHook = Callable[["PartitionLog"], None]

# The epoch a partition is created at; it grows only when an emulated broker
# (shim.testbroker.cluster) hands the partition's leadership to another.
LEADER_EPOCH = 0
# What OffsetForLeaderEpoch answers for an epoch it knows no end of.
NO_EPOCH_END = (-1, -1)
DELETE_TO_HIGH_WATERMARK = -1


class AppendResult(NamedTuple):
    """A tuple: one is made for every append (a frozen dataclass cost a microsecond)."""

    base_offset: int
    last_offset: int
    duplicate: bool = False  # a retried idempotent batch: nothing was written
    duplicate_timestamp: int = -1  # a retried batch's max timestamp, as it was first written


# PartitionLog.append builds it without its Python __new__ (protocol.tuples).
fields_given(AppendResult, "base_offset", "last_offset", "duplicate", "duplicate_timestamp")


class AbortedTransaction(NamedTuple):
    """An aborted transaction as Fetch reports it: consumers reading committed data
    drop that producer's records from `first_offset` up to its ABORT marker."""

    producer_id: int
    first_offset: int


@dataclass(frozen=True)
class TimestampOffset:
    timestamp: int
    offset: int


def first_record_at_or_after(batch: bytes, timestamp: int) -> TimestampOffset:
    """Inside the one batch found for a ListOffsets lookup, the first record whose timestamp
    is at or after `timestamp`, with that record's timestamp: Kafka's LogSegment.findOffsetByTimestamp
    and, for the batch's own max timestamp, RecordBatch.offsetOfMaxTimestamp. Records are
    decoded (and decompressed) only here, off the produce and fetch paths."""
    header = read_header(batch)
    for record in decode_batch(batch, header).records:
        if record.timestamp >= timestamp:
            return TimestampOffset(record.timestamp, record.offset)
    return TimestampOffset(header.max_timestamp, header.last_offset)  # no record says so: the batch


class SegmentSpan(NamedTuple):
    """A segment as ListOffsets v0 sees it: where it starts (never below the log start),
    whether it holds anything, and when it was last written (its file's mtime)."""

    base_offset: int
    empty: bool
    last_modified_ms: int


class PartitionLog(ABC):
    def __init__(self, on_append: AppendHook = lambda log: None) -> None:
        self.producers = ProducerStates()
        self._on_append = on_append
        self.config = LogConfig()
        # Kafka's leader-epoch cache: (epoch, first offset written in it), epochs ascending.
        # Appended batches are stamped with the last one.
        self.epoch_starts: list[tuple[int, int]] = [(LEADER_EPOCH, 0)]
        # The one owner of this partition's storage state: its batches AND its producer
        # state change only under this lock, taken by the request path (append, markers)
        # and by the housekeeping thread (roll, snapshot, retention, the cleaner's swap,
        # producer expiry), so a snapshot never sees a batch without its producer entry.
        # Reentrant: an append's roll snapshots under the same lock.
        self._lock = threading.RLock()

    # -- the contract -------------------------------------------------------

    @property
    @abstractmethod
    def log_start_offset(self) -> int:
        """The first offset still held."""

    @property
    @abstractmethod
    def log_end_offset(self) -> int:
        """The offset the next appended record gets (last offset + 1)."""

    @property
    def high_watermark(self) -> int:
        # One replica: everything appended is committed.
        return self.log_end_offset

    @property
    @abstractmethod
    def size_in_bytes(self) -> int:
        """The bytes of the batches held (Kafka's UnifiedLog.size: its segments' log files)."""

    @abstractmethod
    def read(self, offset: int, max_bytes: int, *, min_one: bool = True) -> bytes:
        """Whole batches from the one holding `offset`, up to `max_bytes`; with
        `min_one`, at least one batch however large (KIP-74). b"" at the log
        end. StorageError(OFFSET_OUT_OF_RANGE) outside [log_start, log_end]."""

    def read_file_records(self, offset: int, max_bytes: int, *, min_one: bool = True) -> bytes | FileRecords:
        """As `read`; a log on disk may leave the batches in its files (protocol.file_records)
        for the server to send without copying them."""
        return self.read(offset, max_bytes, min_one=min_one)

    @abstractmethod
    def offset_for_timestamp(self, timestamp: int) -> TimestampOffset | None:
        """The first record whose timestamp is >= `timestamp`, in the first batch whose max
        timestamp is (Kafka's lookup); None if there is none."""

    @abstractmethod
    def max_timestamp(self) -> TimestampOffset | None:
        """The largest timestamp and the first offset holding it (Kafka's MAX_TIMESTAMP)."""

    @abstractmethod
    def _write(self, batches: RecordBatches, now_ms: int | None = None) -> None:
        """Store batches whose offsets are already assigned; `now_ms`: the broker's time, when
        the caller has read it already (else the log reads its clock, for segment.ms). Called
        under the log's lock."""

    @abstractmethod
    def _write_marker(self, batch: RecordBatches, aborted: AbortedTxn | None) -> None:
        """Store a marker batch (offset assigned) and keep the transaction it aborts, if
        any: both or neither."""

    def last_records_of_active_producers(self) -> dict[int, LastRecord]:
        """What the log cleaner needs of the producers' state, taken under the lock."""
        with self._lock:
            return self.producers.last_records()

    @abstractmethod
    def aborted_ranges(self, start_offset: int, end_offset: int) -> list[AbortedTxn]:
        """The aborted transactions (with their ABORT marker's offset) overlapping
        [start_offset, end_offset), in the order of their markers."""

    @abstractmethod
    def delete_records(self, offset: int) -> int:
        """DeleteRecords: move the log start offset up to `offset` (-1: the high
        watermark); returns the new log start offset. StorageError
        (OFFSET_OUT_OF_RANGE) beyond the high watermark."""

    def segment_spans(self, now_ms: int) -> list[SegmentSpan]:
        """The log's segments, oldest first. A log without segments (in memory) is one
        segment from the log start, written `now_ms` (it has no file times)."""
        return [SegmentSpan(self.log_start_offset, self.log_end_offset == self.log_start_offset, now_ms)]

    # -- lifecycle hooks a durable log implements (no-ops in memory) ---------

    def configure(self, config: LogConfig) -> None:
        """The topic's configs changed (or were set at creation)."""
        self.config = config

    def flush(self) -> None:  # noqa: B027
        """Make everything appended so far durable against power loss."""

    def close(self) -> bool:
        """Release files; the log is not used afterwards. Whether everything was written."""
        return True

    def delete(self) -> None:  # noqa: B027
        """The topic was deleted: close and remove whatever the log holds."""

    # -- shared behaviour ---------------------------------------------------

    @property
    def leader_epoch(self) -> int:
        return self.epoch_starts[-1][0]

    def begin_leader_epoch(self, epoch: int) -> None:
        """A new leader starts `epoch` at the log end (Kafka's LeaderEpochFileCache.assign):
        earlier epochs in which nothing was written are dropped, as Kafka drops them."""
        start = self.log_end_offset
        kept = [(e, s) for e, s in self.epoch_starts if e < epoch and s < start]
        self.epoch_starts = [*kept, (epoch, start)]
        self._epochs_changed()

    def _epochs_changed(self) -> None:  # noqa: B027
        """Keep the leader-epoch cache where the log keeps its state (on disk: a file)."""

    def end_offset_for_epoch(self, epoch: int) -> tuple[int, int]:
        """(epoch, end offset) as Kafka's leader-epoch cache answers OffsetForLeaderEpoch: the
        current epoch ends at the log end; an older one where the next known epoch starts,
        named by the newest known epoch at or below it; one newer than any, or -1, has no end."""
        if epoch == self.leader_epoch:
            return epoch, self.log_end_offset
        later = next(((e, s) for e, s in self.epoch_starts if e > epoch), None)
        if epoch == NO_EPOCH_END[0] or later is None:
            return NO_EPOCH_END
        floor = [e for e, _ in self.epoch_starts if e <= epoch]
        start = max(later[1], self.log_start_offset)
        return (floor[-1] if floor else epoch), start

    def epoch_at(self, offset: int) -> int:
        """The leader epoch `offset` was written in (ListOffsets answers it beside the offset)."""
        return next((e for e, s in reversed(self.epoch_starts) if s <= offset), self.epoch_starts[0][0])

    @property
    def last_stable_offset(self) -> int:
        """The first offset of the earliest open transaction, else the high watermark:
        a read_committed consumer reads below it."""
        unstable = self.producers.first_unstable_offset
        if unstable is None:
            return self.high_watermark
        # Never below the log start, as Kafka: DeleteRecords may pass an open transaction's start.
        return max(min(unstable, self.high_watermark), self.log_start_offset)

    def aborted_transactions(self, start_offset: int, end_offset: int) -> list[AbortedTransaction]:
        """The aborted transactions with records in [start_offset, end_offset): what a
        read_committed Fetch returns beside the records it serves from that range."""
        return [
            AbortedTransaction(e.producer_id, e.first_offset)
            for e in self.aborted_ranges(start_offset, end_offset)
        ]

    def read_committed(self, offset: int, max_bytes: int, *, min_one: bool = True) -> bytes:
        """`read` bounded by the last stable offset: whole batches below it only."""
        self.check_fetch_offset(offset)
        stable = self.last_stable_offset
        if offset >= stable:
            return b""
        data = self.read(offset, max_bytes, min_one=min_one)
        if stable >= self.log_end_offset:
            return data
        # The LSO is the base offset of a transaction's first batch: cut there.
        end = 0
        for header in iter_headers(data):
            if header.base_offset >= stable:
                break
            end = header.end
        return data[:end]

    def append(self, batches: RecordBatches) -> AppendResult:
        """StorageError(KAFKA_STORAGE_ERROR) when the write fails: nothing of it stays."""
        first = batches.headers[0]
        idempotent = first.has_producer_id
        if idempotent:
            if first.is_control:
                raise StorageError(
                    ErrorCode.INVALID_RECORD, "control batches are written by write_txn_marker"
                )
            if len(batches.headers) != 1:
                # Kafka requires one batch per partition from v3 producers; for
                # idempotent ones the sequence bookkeeping depends on it.
                raise StorageError(ErrorCode.INVALID_RECORD, "an idempotent produce holds one batch")
        with self._lock:
            if idempotent:
                earlier = self.producers.check(first)
                if earlier is not None:
                    return AppendResult(earlier.base_offset, earlier.last_offset, True, earlier.max_timestamp)
            placed = batches.with_base_offset(self.log_end_offset, self.leader_epoch)
            self._write(placed)
            if idempotent:
                self.producers.record(placed.first)
        self._on_append(self)
        last = placed.headers[-1]
        # Built without AppendResult's Python `__new__` (protocol.tuples): one per Produce partition.
        return new_tuple(
            AppendResult,
            (placed.headers[0].base_offset, last.base_offset + last.last_offset_delta, False, -1),
        )

    def append_placed(self, batch: RecordBatches, now_ms: int | None = None) -> None:
        """One batch without a producer that the broker built itself where the log places it
        (an offset commit: storage.offsets_log): `append` without a producer's checks or a
        result. StorageError as `append`; ValueError if it is not placed at the log end.
        `now_ms`: the broker's time as the caller read it (one clock read less a commit)."""
        with self._lock:
            (header,) = batch.headers
            if (
                header.base_offset != self.log_end_offset
                or header.partition_leader_epoch != self.leader_epoch
            ):
                raise ValueError(f"a batch not built at the log end {self.log_end_offset}: {header}")
            self._write(batch, now_ms)
        self._on_append(self)

    def write_txn_marker(
        self,
        producer_id: int,
        producer_epoch: int,
        commit: bool,
        coordinator_epoch: int,
        timestamp_ms: int,
        transaction_version: int = 0,
    ) -> int:
        """Append a COMMIT or ABORT marker for the producer's transaction and close it
        here (an abort keeps its range for Fetch); returns the marker's offset.
        StorageError(INVALID_PRODUCER_EPOCH) for an epoch older than the partition's,
        (TRANSACTION_COORDINATOR_FENCED) for a coordinator epoch older than the last marker's;
        a marker of transaction version 2 must be newer than the partition's epoch."""
        with self._lock:
            self.producers.check_marker(producer_id, producer_epoch, coordinator_epoch, transaction_version)
            offset = self.log_end_offset
            marker = EndTxnMarker(commit, coordinator_epoch)
            batch = build_marker_batch(
                marker,
                offset=offset,
                producer_id=producer_id,
                producer_epoch=producer_epoch,
                timestamp_ms=timestamp_ms,
                partition_leader_epoch=self.leader_epoch,
            )
            # Written (with the aborted range it closes) before the producer state changes.
            self._write_marker(batch, None if commit else self.producers.aborted_by(producer_id, offset))
            self.producers.record_marker(producer_id, producer_epoch, marker, offset, timestamp_ms)
        self._on_append(self)
        return offset

    def records_deletion_target(self, offset: int) -> int:
        """The new log start a DeleteRecords(`offset`) asks for, checked."""
        target = self.high_watermark if offset == DELETE_TO_HIGH_WATERMARK else offset
        if not 0 <= target <= self.high_watermark:
            raise StorageError(
                ErrorCode.OFFSET_OUT_OF_RANGE,
                f"cannot delete records before {offset}: the high watermark is {self.high_watermark}",
            )
        return max(target, self.log_start_offset)

    def check_fetch_offset(self, offset: int) -> None:
        if not self.log_start_offset <= offset <= self.log_end_offset:
            raise StorageError(
                ErrorCode.OFFSET_OUT_OF_RANGE,
                f"offset {offset} outside [{self.log_start_offset}, {self.log_end_offset}]",
            )
