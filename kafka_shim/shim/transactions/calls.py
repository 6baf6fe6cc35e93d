"""One transaction coordinator call, one Outcome (coordinator/outcome.py): its records,
deadlines and markers, and an `undo` that puts back every transactional id it changed when the
records are not written (write, then change memory). Also the ids' `__transaction_state`
records, written and read back."""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Mapping
from typing import NamedTuple, TypeVar

from kafka_shim.protocol.transaction_records import TransactionRecord, TransactionValue
from kafka_shim.shim.coordinator.outcome import Outcome, TransactionMarkers
from kafka_shim.shim.coordinator.types import TopicPartition
from kafka_shim.shim.transactions.state import TransactionMetadata, TxnState

R = TypeVar("R")


class _Kept(NamedTuple):
    """One transactional id as it was before a call changed it, to put back."""

    meta: TransactionMetadata | None
    unmarked: set[TopicPartition] | None


class TransactionCalls:
    """The transactional ids kept, and the making of one Outcome per call: what the call
    appends to `_records`, `_timers` and `_markers` is its outcome, and every id it changes is
    kept first (`_keep`) for the outcome's `undo`."""

    def __init__(self) -> None:
        self._txns: dict[str, TransactionMetadata] = {}
        # Partitions of a PrepareCommit / PrepareAbort transaction still without a marker.
        self._unmarked: dict[str, set[TopicPartition]] = {}
        # Whether the periodic expiry check is set (its deadline is the writer's).
        self._expiry_set = False
        # What the call under way has produced so far (its outcome), and what it changed.
        self._records: list[TransactionRecord] = []
        self._timers: dict[Hashable, int | None] = {}
        self._markers: list[TransactionMarkers] = []
        self._kept: dict[str, _Kept] = {}

    def _call(self, concerned: Iterable[str], body: Callable[[], R]) -> Outcome[R]:
        """Run `body` as one call: the ids it concerns are kept first (and any it forgets on
        the way), so that the outcome's `undo` puts them back when its records are not
        written; anything `body` raises puts them back at once."""
        expiry_set = self._expiry_set
        for transactional_id in concerned:
            self._keep(transactional_id)
        try:
            response = body()
        except BaseException:
            kept, self._kept = self._kept, {}
            self._restore(kept, expiry_set)
            self._records, self._timers, self._markers = [], {}, []
            raise
        return self._finish(response, expiry_set)

    def _finish(self, response: R, expiry_set: bool) -> Outcome[R]:
        records, timers, markers = tuple(self._records), tuple(self._timers.items()), tuple(self._markers)
        kept = self._kept
        self._records, self._timers, self._markers, self._kept = [], {}, [], {}
        undo = (lambda: self._restore(kept, expiry_set)) if records else None
        return Outcome(response, records, timers, undo=undo, markers=markers)

    def _keep(self, transactional_id: str) -> None:
        """The id as it is now: a copy of its metadata (TransactionMetadata.copy) and of its
        unmarked partitions, which the call may change in place, to put back in their stead."""
        if transactional_id not in self._kept:
            meta = self._txns.get(transactional_id)
            unmarked = self._unmarked.get(transactional_id)
            self._kept[transactional_id] = _Kept(
                None if meta is None else meta.copy(), None if unmarked is None else set(unmarked)
            )

    def _restore(self, kept: Mapping[str, _Kept], expiry_set: bool) -> None:
        """Write, then change memory: each id the call changed goes back to what the log says."""
        for transactional_id, (meta, unmarked) in kept.items():
            if meta is None:
                self._txns.pop(transactional_id, None)
            else:
                self._txns[transactional_id] = meta
            if unmarked is None:
                self._unmarked.pop(transactional_id, None)
            else:
                self._unmarked[transactional_id] = unmarked
        self._expiry_set = expiry_set

    def _schedule(self, key: Hashable, at: int | None) -> None:
        self._timers.pop(key, None)  # keep the order deadlines were last set in
        self._timers[key] = at

    def _persist(self, meta: TransactionMetadata) -> None:
        self._records.append(record_of(meta))


def record_of(meta: TransactionMetadata) -> TransactionRecord:
    """The id's `__transaction_state` record (Kafka's TransactionLogValue)."""
    partitions: dict[str, list[int]] = {}
    for tp in sorted(meta.partitions):
        partitions.setdefault(tp.topic, []).append(tp.partition)
    value = TransactionValue(
        producer_id=meta.producer_id,
        producer_epoch=meta.producer_epoch,
        timeout_ms=meta.timeout_ms,
        status=int(meta.state),
        partitions=tuple((topic, tuple(ids)) for topic, ids in partitions.items()),
        last_update_ms=meta.last_update_ms,
        start_ms=meta.start_ms,
        previous_producer_id=meta.previous_producer_id,
        next_producer_id=meta.next_producer_id,
        client_transaction_version=meta.client_version,
    )
    return TransactionRecord(meta.transactional_id, value)


def metadata_of(transactional_id: str, value: TransactionValue) -> TransactionMetadata:
    """An id's metadata as its latest record left it."""
    return TransactionMetadata(
        transactional_id=transactional_id,
        producer_id=value.producer_id,
        timeout_ms=value.timeout_ms,
        last_update_ms=value.last_update_ms,
        producer_epoch=value.producer_epoch,
        previous_producer_id=value.previous_producer_id,
        next_producer_id=value.next_producer_id,
        state=TxnState(value.status),
        partitions={TopicPartition(topic, p) for topic, ids in value.partitions for p in ids},
        start_ms=value.start_ms,
        client_version=value.client_transaction_version,
    )
