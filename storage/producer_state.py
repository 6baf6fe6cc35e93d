"""Idempotent producers: per-partition sequence tracking and producer-id allocation.

Mirrors Kafka's ProducerStateManager / ProducerAppendInfo for non-transactional
producers: the last five batches per producer are remembered (a producer keeps
at most five requests in flight), so a retried batch is recognised and
answered with the offsets it got the first time instead of being written twice.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable
from dataclasses import astuple, dataclass, field
from typing import Any

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.protocol.records import BatchHeader
from kafka_shim.storage.errors import StorageError

RETAINED_BATCHES = 5
INT32_MAX = 2**31 - 1


@dataclass(frozen=True)
class AppendedBatch:
    first_sequence: int
    last_sequence: int
    base_offset: int
    last_offset: int


@dataclass
class ProducerEntry:
    epoch: int
    batches: deque[AppendedBatch] = field(default_factory=lambda: deque(maxlen=RETAINED_BATCHES))

    @property
    def last_sequence(self) -> int:
        return self.batches[-1].last_sequence if self.batches else -1


def in_sequence(last: int, first: int) -> bool:
    return first == last + 1 or (first == 0 and last == INT32_MAX)


class ProducerStates:
    """The producers that wrote to one partition."""

    def __init__(self) -> None:
        self._entries: dict[int, ProducerEntry] = {}

    def check(self, batch: BatchHeader) -> AppendedBatch | None:
        """Before an append: the earlier append `batch` duplicates, None if it is
        new, or StorageError when its epoch or sequence is out of line."""
        entry = self._entries.get(batch.producer_id)
        if entry is None:
            # Unknown producer (first write, or state lost with an in-memory
            # restart): Kafka accepts any sequence.
            return None
        if batch.producer_epoch < entry.epoch:
            raise StorageError(
                ErrorCode.INVALID_PRODUCER_EPOCH,
                f"producer {batch.producer_id} epoch {batch.producer_epoch} is older than {entry.epoch}",
            )
        if batch.producer_epoch > entry.epoch:
            if batch.base_sequence != 0:
                raise StorageError(
                    ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER,
                    f"sequence {batch.base_sequence} for a new epoch of producer {batch.producer_id}",
                )
            return None
        for earlier in entry.batches:
            if (earlier.first_sequence, earlier.last_sequence) == (batch.base_sequence, batch.last_sequence):
                return earlier
        if in_sequence(entry.last_sequence, batch.base_sequence):
            return None
        if batch.last_sequence <= entry.last_sequence:
            # Written already, but too long ago to answer with its offsets.
            raise StorageError(
                ErrorCode.DUPLICATE_SEQUENCE_NUMBER,
                f"sequence {batch.base_sequence} of producer {batch.producer_id} was already written",
            )
        raise StorageError(
            ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER,
            f"sequence {batch.base_sequence} of producer {batch.producer_id} "
            f"does not follow {entry.last_sequence}",
        )

    def next_sequence(self, producer_id: int, epoch: int) -> int:
        """The base sequence `check` accepts next from this producer at this epoch
        (a writer inside the broker numbers its own batches with it)."""
        entry = self._entries.get(producer_id)
        if entry is None or entry.epoch != epoch or entry.last_sequence == INT32_MAX:
            return 0
        return entry.last_sequence + 1

    def record(self, batch: BatchHeader) -> None:
        """After an append: remember `batch` (with its assigned offsets)."""
        self._remember(
            batch.producer_id,
            batch.producer_epoch,
            AppendedBatch(batch.base_sequence, batch.last_sequence, batch.base_offset, batch.last_offset),
        )

    def _remember(self, producer_id: int, epoch: int, batch: AppendedBatch) -> None:
        entry = self._entries.get(producer_id)
        if entry is None or entry.epoch != epoch:
            entry = self._entries[producer_id] = ProducerEntry(epoch)
        entry.batches.append(batch)

    def replay(self, batches: Iterable[BatchHeader]) -> None:
        """Rebuild from the log's own batches (after a restart), oldest first."""
        for batch in batches:
            if batch.has_producer_id:
                self.record(batch)

    def snapshot(self) -> dict[str, Any]:
        """What `from_snapshot` restores: JSON-ready."""
        return {
            str(producer_id): {"epoch": entry.epoch, "batches": [list(astuple(b)) for b in entry.batches]}
            for producer_id, entry in self._entries.items()
        }

    @classmethod
    def from_snapshot(cls, snapshot: dict[str, Any]) -> ProducerStates:
        """ValueError (or KeyError/TypeError) for anything `snapshot` did not write."""
        states = cls()
        for producer_id, entry in snapshot.items():
            for first, last, base, last_offset in entry["batches"]:
                batch = AppendedBatch(int(first), int(last), int(base), int(last_offset))
                states._remember(int(producer_id), int(entry["epoch"]), batch)
        return states


class ProducerIdAllocator:
    """Hands out producer ids for InitProducerId; epochs start at 0.

    In memory ids restart at 0 with the process, which is safe: partitions
    forget their producers too. A durable store must persist the next id.
    """

    def __init__(self, next_id: int = 0) -> None:
        self._next_id = next_id

    def allocate(self) -> int:
        producer_id = self._next_id
        self._next_id += 1
        return producer_id
