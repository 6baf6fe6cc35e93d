"""The partition log interface: what handlers may ask of one topic-partition.

Batches are stored exactly as produced except for `baseOffset`, which the log
assigns. `append` is a template shared by every implementation (idempotence
checks, offset assignment, the append hook); an implementation provides
`_write` and the reads. The in-memory log is `storage.memory.MemoryLog`; a
durable segment log slots in beside it with the same contract.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.protocol.records import RecordBatches
from kafka_shim.storage.errors import StorageError
from kafka_shim.storage.log_config import LogConfig
from kafka_shim.storage.producer_state import ProducerStates

# Called with the log that grew, so only Fetches waiting on it are woken.
AppendHook = Callable[["PartitionLog"], None]

# One broker leads every partition forever: the leader epoch never moves.
LEADER_EPOCH = 0
DELETE_TO_HIGH_WATERMARK = -1


@dataclass(frozen=True)
class AppendResult:
    base_offset: int
    last_offset: int
    duplicate: bool = False  # a retried idempotent batch: nothing was written


@dataclass(frozen=True)
class TimestampOffset:
    timestamp: int
    offset: int


class PartitionLog(ABC):
    def __init__(self, on_append: AppendHook = lambda log: None) -> None:
        self.producers = ProducerStates()
        self._on_append = on_append
        self.config = LogConfig()

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

    @abstractmethod
    def read(self, offset: int, max_bytes: int, *, min_one: bool = True) -> bytes:
        """Whole batches from the one holding `offset`, up to `max_bytes`; with
        `min_one`, at least one batch however large (KIP-74). b"" at the log
        end. StorageError(OFFSET_OUT_OF_RANGE) outside [log_start, log_end]."""

    @abstractmethod
    def offset_for_timestamp(self, timestamp: int) -> TimestampOffset | None:
        """The first batch whose max timestamp is >= `timestamp` (batch
        granularity: records are never decoded); None if there is none."""

    @abstractmethod
    def max_timestamp(self) -> TimestampOffset | None:
        """The largest timestamp and the last offset of the batch holding it."""

    @abstractmethod
    def _write(self, batches: RecordBatches) -> None:
        """Store batches whose offsets are already assigned."""

    @abstractmethod
    def delete_records(self, offset: int) -> int:
        """DeleteRecords: move the log start offset up to `offset` (-1: the high
        watermark); returns the new log start offset. StorageError
        (OFFSET_OUT_OF_RANGE) beyond the high watermark."""

    # -- lifecycle hooks a durable log implements (no-ops in memory) ---------

    def configure(self, config: LogConfig) -> None:
        """The topic's configs changed (or were set at creation)."""
        self.config = config

    def flush(self) -> None:  # noqa: B027
        """Make everything appended so far durable against power loss."""

    def close(self) -> None:  # noqa: B027
        """Release files; the log is not used afterwards."""

    def delete(self) -> None:  # noqa: B027
        """The topic was deleted: close and remove whatever the log holds."""

    # -- shared behaviour ---------------------------------------------------

    def append(self, batches: RecordBatches) -> AppendResult:
        idempotent = batches.first.has_producer_id
        if idempotent:
            if len(batches.headers) != 1:
                # Kafka requires one batch per partition from v3 producers; for
                # idempotent ones the sequence bookkeeping depends on it.
                raise StorageError(ErrorCode.INVALID_RECORD, "an idempotent produce holds one batch")
            earlier = self.producers.check(batches.first)
            if earlier is not None:
                return AppendResult(earlier.base_offset, earlier.last_offset, duplicate=True)
        placed = batches.with_base_offset(self.log_end_offset, LEADER_EPOCH)
        self._write(placed)
        if idempotent:
            self.producers.record(placed.first)
        self._on_append(self)
        return AppendResult(placed.first.base_offset, placed.last.last_offset)

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
