"""Idempotent and transactional producers: per-partition state and producer-id allocation.

Mirrors Kafka's ProducerStateManager / ProducerAppendInfo: the last five batches
per producer are remembered (a producer keeps at most five requests in flight),
so a retried batch is recognised and answered with the offsets it got the first
time instead of being written twice. A transactional producer's first batch in
a partition opens its transaction there (its offset bounds the last stable
offset) until a COMMIT or ABORT marker closes it; the marker's coordinator epoch
is remembered so a marker from a deposed coordinator is fenced.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Iterator
from dataclasses import astuple, dataclass, field
from typing import Any, NamedTuple

from kafka_shim.protocol.control_records import EndTxnMarker
from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.protocol.records import BatchHeader
from kafka_shim.storage.errors import StorageError
from kafka_shim.storage.txn_index import AbortedTxn

RETAINED_BATCHES = 5
INT32_MAX = 2**31 - 1
NO_COORDINATOR_EPOCH = -1
NO_TIMESTAMP = -1


@dataclass(frozen=True)
class AppendedBatch:
    first_sequence: int
    last_sequence: int
    base_offset: int
    last_offset: int
    # Kafka answers a retried batch with this as its log append time (BatchMetadata.timestamp);
    # snapshots keep it (one written before it existed reads back -1).
    max_timestamp: int = NO_TIMESTAMP


class CompletedTxn(NamedTuple):
    """A transaction a marker closed in this partition: its data spans
    [first_offset, last_offset), the marker sits at last_offset."""

    producer_id: int
    first_offset: int
    last_offset: int
    aborted: bool


class LastRecord(NamedTuple):
    """What the log cleaner keeps of an active producer (Kafka's LastRecord): the last offset
    of its last data batch in its current epoch (None when it has none there, as after an
    epoch bump by a marker) and that epoch."""

    last_data_offset: int | None
    producer_epoch: int


@dataclass
class ProducerEntry:
    epoch: int
    batches: deque[AppendedBatch] = field(default_factory=lambda: deque(maxlen=RETAINED_BATCHES))
    coordinator_epoch: int = NO_COORDINATOR_EPOCH
    txn_first_offset: int | None = None  # the open transaction's first offset here
    last_timestamp: int = NO_TIMESTAMP

    @property
    def last_sequence(self) -> int:
        return self.batches[-1].last_sequence if self.batches else -1

    def move_to_epoch(self, epoch: int) -> None:
        """A new epoch forgets the old one's batches (sequences restart at 0)."""
        if epoch != self.epoch:
            self.epoch = epoch
            self.batches.clear()


def in_sequence(last: int, first: int) -> bool:
    return first == last + 1 or (first == 0 and last == INT32_MAX)


class ProducerStates:
    """The producers that wrote to one partition."""

    def __init__(self) -> None:
        self._entries: dict[int, ProducerEntry] = {}
        # Producer id -> first offset of its open transaction; the least bounds the LSO.
        self._ongoing: dict[int, int] = {}

    def __iter__(self) -> Iterator[tuple[int, ProducerEntry]]:
        return iter(self._entries.items())

    @property
    def first_unstable_offset(self) -> int | None:
        """The first offset of the earliest open transaction, None if none is open.
        The disk cleaner reads it from the housekeeping thread: one pass over int values
        in C, which no append interleaves with under the GIL. It never decreases, so a
        value read just before an append is only more cautious."""
        ongoing = self._ongoing
        if not ongoing:  # nearly always (a Fetch asks on every partition it answers)
            return None
        # Still default=None: from the cleaner's thread, the last transaction may close between
        # the test above and this pass, and min() of no values raises.
        return min(ongoing.values(), default=None)

    def ongoing_transactions(self) -> dict[int, int]:
        return dict(self._ongoing)

    def in_transaction(self, producer_id: int, epoch: int) -> bool:
        """Whether the producer has a transaction open here under `epoch`: a batch of it needs
        no verification by the coordinator (Kafka's UnifiedLog.hasOngoingTransaction)."""
        entry = self._entries.get(producer_id)
        return producer_id in self._ongoing and entry is not None and entry.epoch == epoch

    def last_records(self) -> dict[int, LastRecord]:
        """Every producer's LastRecord (Kafka's UnifiedLog.lastRecordsOfActiveProducers)."""
        return {
            producer_id: LastRecord(entry.batches[-1].last_offset if entry.batches else None, entry.epoch)
            for producer_id, entry in self._entries.items()
        }

    def check(self, batch: BatchHeader) -> AppendedBatch | None:
        """Before an append: the earlier append `batch` duplicates, None if it is
        new, or StorageError when its epoch, sequence or transactional state is
        out of line."""
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
            self._check_transactional(batch, entry)
            return None
        for earlier in entry.batches:
            if (earlier.first_sequence, earlier.last_sequence) == (batch.base_sequence, batch.last_sequence):
                return earlier
        if in_sequence(entry.last_sequence, batch.base_sequence):
            self._check_transactional(batch, entry)
            return None
        # Kafka 3.9 (ProducerAppendInfo.checkSequence) answers anything but an exact retry of one
        # of the last five batches or the next sequence with OUT_OF_ORDER_SEQUENCE_NUMBER, also a
        # batch overlapping sequences already written.
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

    @staticmethod
    def _check_transactional(batch: BatchHeader, entry: ProducerEntry) -> None:
        if entry.txn_first_offset is not None and not batch.is_transactional:
            raise StorageError(
                ErrorCode.INVALID_TXN_STATE,
                f"producer {batch.producer_id} wrote a non-transactional batch inside its "
                f"transaction open since offset {entry.txn_first_offset}",
            )

    def record(self, batch: BatchHeader) -> None:
        """After an append: remember data batch `batch` (with its assigned offsets);
        a transactional one opens its producer's transaction if none is open."""
        entry = self._entry(batch.producer_id, batch.producer_epoch)
        entry.batches.append(
            AppendedBatch(
                batch.base_sequence,
                batch.last_sequence,
                batch.base_offset,
                batch.last_offset,
                batch.max_timestamp,
            )
        )
        entry.last_timestamp = batch.max_timestamp
        if batch.is_transactional and entry.txn_first_offset is None:
            entry.txn_first_offset = batch.base_offset
            self._ongoing[batch.producer_id] = batch.base_offset

    def _entry(self, producer_id: int, epoch: int) -> ProducerEntry:
        entry = self._entries.get(producer_id)
        if entry is None:
            entry = self._entries[producer_id] = ProducerEntry(epoch)
        entry.move_to_epoch(epoch)
        return entry

    def check_marker(
        self, producer_id: int, epoch: int, coordinator_epoch: int, transaction_version: int = 0
    ) -> None:
        """Before a COMMIT/ABORT marker: StorageError if its producer epoch is older
        than the partition's (a fenced producer) or its coordinator epoch older than
        the last marker's (a deposed coordinator). Markers of transaction version 2
        carry the bumped epoch, which is newer and passes; one that says so (WriteTxnMarkers
        v2, KIP-1228) must be newer, as Kafka 4.2's ProducerAppendInfo.checkProducerEpoch."""
        entry = self._entries.get(producer_id)
        if entry is None:
            return
        if epoch < entry.epoch or (transaction_version >= 2 and epoch == entry.epoch):
            comparison = "<=" if transaction_version >= 2 else "<"
            raise StorageError(
                ErrorCode.INVALID_PRODUCER_EPOCH,
                f"Epoch of producer {producer_id} is {epoch}, which is {comparison} the last seen epoch "
                f"{entry.epoch} (TV{transaction_version})",
            )
        if coordinator_epoch < entry.coordinator_epoch:
            raise StorageError(
                ErrorCode.TRANSACTION_COORDINATOR_FENCED,
                f"marker coordinator epoch {coordinator_epoch} of producer {producer_id} "
                f"is older than {entry.coordinator_epoch}",
            )

    def record_marker(
        self, producer_id: int, epoch: int, marker: EndTxnMarker, offset: int, timestamp: int
    ) -> CompletedTxn | None:
        """After a marker was written at `offset`: close the producer's transaction.
        The transaction it closed, None if none was open here (a marker without data
        leaves no aborted range, as in Kafka)."""
        entry = self._entry(producer_id, epoch)
        entry.coordinator_epoch = marker.coordinator_epoch
        entry.last_timestamp = timestamp
        first = entry.txn_first_offset
        entry.txn_first_offset = None
        self._ongoing.pop(producer_id, None)
        if first is None:
            return None
        return CompletedTxn(producer_id, first, offset, not marker.commit)

    def expire(self, now_ms: int, expiration_ms: int) -> list[int]:
        """Forget producers whose last batch or marker is `expiration_ms` old and that have no
        transaction open here (Kafka's producer.id.expiration.ms, judged as Kafka judges it by
        the batch's max timestamp); their retried batches are then new to this partition.
        Returns the producer ids forgotten."""
        expired = [
            producer_id
            for producer_id, entry in self._entries.items()
            if entry.txn_first_offset is None and now_ms - entry.last_timestamp >= expiration_ms
        ]
        for producer_id in expired:
            del self._entries[producer_id]
        return expired

    def aborted_by(self, producer_id: int, offset: int) -> AbortedTxn | None:
        """The aborted range an ABORT marker of the producer at `offset` (the log's end) closes,
        None if it has no transaction open here; nothing changes (`record_marker` does that)."""
        entry = self._entries.get(producer_id)
        if entry is None or entry.txn_first_offset is None:
            return None
        others = [first for other, first in self._ongoing.items() if other != producer_id]
        return AbortedTxn(producer_id, entry.txn_first_offset, offset, min(others, default=offset + 1))

    def stable_after(self, offset: int) -> int:
        """The last stable offset once a marker at `offset` (the log's last) is written."""
        unstable = self.first_unstable_offset
        return offset + 1 if unstable is None else unstable

    def replay(self, batches: Iterable[tuple[BatchHeader, EndTxnMarker | None]]) -> list[AbortedTxn]:
        """Rebuild from the log's own batches (after a restart), oldest first, each
        with the marker it holds if it is a control batch; returns the aborted
        transactions the markers closed, as the log indexed them when written."""
        aborted: list[AbortedTxn] = []
        for batch, marker in batches:
            if not batch.has_producer_id:
                continue
            if not batch.is_control:
                self.record(batch)
                continue
            if marker is None:
                continue
            offset = batch.base_offset
            done = self.record_marker(
                batch.producer_id, batch.producer_epoch, marker, offset, batch.max_timestamp
            )
            if done is not None and done.aborted:
                aborted.append(
                    AbortedTxn(done.producer_id, done.first_offset, offset, self.stable_after(offset))
                )
        return aborted

    def snapshot(self) -> dict[str, Any]:
        """What `from_snapshot` restores: JSON-ready."""
        return {
            str(producer_id): {
                "epoch": entry.epoch,
                "batches": [list(astuple(b)) for b in entry.batches],
                "coordinator_epoch": entry.coordinator_epoch,
                "txn_first_offset": entry.txn_first_offset,
                "last_timestamp": entry.last_timestamp,
            }
            for producer_id, entry in self._entries.items()
        }

    @classmethod
    def from_snapshot(cls, snapshot: dict[str, Any]) -> ProducerStates:
        """ValueError (or KeyError/TypeError) for anything `snapshot` did not write.
        Snapshots from before transactions lack the transactional fields."""
        states = cls()
        for producer_id, saved in snapshot.items():
            entry = states._entry(int(producer_id), int(saved["epoch"]))
            for fields in saved["batches"]:  # four values in snapshots from before max_timestamp
                if len(fields) not in (4, 5):
                    raise ValueError(f"a batch of {len(fields)} values")
                entry.batches.append(AppendedBatch(*(int(value) for value in fields)))
            entry.coordinator_epoch = int(saved.get("coordinator_epoch", NO_COORDINATOR_EPOCH))
            entry.last_timestamp = int(saved.get("last_timestamp", NO_TIMESTAMP))
            txn_first_offset = saved.get("txn_first_offset")
            if txn_first_offset is not None:
                entry.txn_first_offset = int(txn_first_offset)
                states._ongoing[int(producer_id)] = entry.txn_first_offset
        return states


class ProducerIdAllocator:
    """Hands out producer ids for InitProducerId; epochs start at 0.

    In memory ids restart at 0 with the process, which is safe: partitions
    forget their producers too. A durable store must persist the next id.
    """

    def __init__(self, next_id: int = 0) -> None:
        self._next_id = next_id
        self._stride = 1

    def interleave(self, position: int, count: int) -> None:
        """From now on hand out only ids equal to `position` modulo `count`: `count` processes
        that allocate on their own (one per emulated broker) never hand out the same id."""
        self._next_id += (position - self._next_id) % count
        self._stride = count

    def allocate(self) -> int:
        producer_id = self._next_id
        self._next_id += self._stride
        return producer_id
