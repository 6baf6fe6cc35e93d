"""The transaction coordinator as a pure state machine (Kafka's TransactionCoordinator).

Nothing here reads a clock, sleeps or does I/O: every call takes `now` (ms) and answers an
`Outcome` (coordinator/outcome.py), as the group coordinators do: its `__transaction_state`
records, the deadlines to set or cancel, and, for a transaction that moved to PrepareCommit /
PrepareAbort, the markers to write. The writer (transactions.service) appends the records
before the answer goes out and runs the outcome's `undo` when they cannot be written, which
puts back every transactional id the call changed. Once the markers are written it reports
back with `markers_written`, which completes the transaction (CompleteCommit /
CompleteAbort, another record).

Deadlines by key:
  ("timeout", id)   an ongoing transaction's transaction.timeout.ms: fence and abort
  ("markers", id)   retry the markers that could not be written
  ("expire",)       the periodic transactional.id.expiration.ms check
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Collection, Hashable, Iterable, Mapping

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.protocol.releases import TV2
from kafka_shim.protocol.transaction_records import TransactionRecord
from kafka_shim.shim.coordinator.outcome import Outcome
from kafka_shim.shim.coordinator.types import TopicPartition
from kafka_shim.shim.transactions.calls import TransactionCalls, metadata_of
from kafka_shim.shim.transactions.ending import end_check
from kafka_shim.shim.transactions.state import (
    COMPLETING,
    EXPIRABLE,
    MAX_EPOCH,
    NO_PRODUCER_EPOCH,
    NO_PRODUCER_ID,
    STATES_BY_NAME,
    TransactionMetadata,
    TxnState,
)
from kafka_shim.shim.transactions.types import (
    DEADLINE_RETRY_MS,
    EVICTED_SHARE,
    MARKER_RETRY_MS,
    MARKER_SETTLED,
    Completion,
    ProducerIdAndEpoch,
    TransactionConfig,
    TransactionDescription,
    TransactionListing,
)

# Re-exported: the handlers and tests name them from the coordinator.
__all__ = [
    "DEADLINE_RETRY_MS",
    "MARKER_RETRY_MS",
    "TV2",
    "Completion",
    "ProducerIdAndEpoch",
    "TransactionConfig",
    "TransactionCoordinator",
    "TransactionDescription",
    "TransactionListing",
]


class TransactionCoordinator(TransactionCalls):
    def __init__(self, config: TransactionConfig, allocate_producer_id: Callable[[], int]) -> None:
        super().__init__()
        self.config = config
        self._allocate = allocate_producer_id

    def load(self, records: Iterable[TransactionRecord], now: int) -> Outcome[None]:
        """Rebuild from `__transaction_state` (the latest record of each id). Transactions
        found preparing to commit or abort have their markers written again; ongoing ones
        time out as they would have."""
        return self._call((), lambda: self._load(records, now))

    def _load(self, records: Iterable[TransactionRecord], now: int) -> None:
        for record in records:
            if record.value is None:
                self._txns.pop(record.transactional_id, None)
            else:
                self._txns[record.transactional_id] = metadata_of(record.transactional_id, record.value)
        for meta in list(self._txns.values()):
            if meta.state is TxnState.DEAD:
                del self._txns[meta.transactional_id]
            elif meta.state is TxnState.ONGOING:
                self._schedule(("timeout", meta.transactional_id), meta.start_ms + meta.timeout_ms)
            elif meta.state in COMPLETING:
                self._queue_markers(meta, set(meta.partitions))
        self._schedule_expiration(now)

    # --- InitProducerId ---------------------------------------------------------------

    def init_producer_id(
        self, transactional_id: str, timeout_ms: int, expected: tuple[int, int] | None, now: int
    ) -> Outcome[ProducerIdAndEpoch]:
        """InitProducerId with a transactional id; `expected` is the (producer id, epoch)
        a v3+ producer already holds (KIP-360), None for a new producer."""
        return self._call(
            (transactional_id,), lambda: self._init_producer_id(transactional_id, timeout_ms, expected, now)
        )

    def _init_producer_id(
        self, transactional_id: str, timeout_ms: int, expected: tuple[int, int] | None, now: int
    ) -> ProducerIdAndEpoch:
        if not transactional_id:
            return ProducerIdAndEpoch(ErrorCode.INVALID_REQUEST)
        if not 0 < timeout_ms <= self.config.max_timeout_ms:
            return ProducerIdAndEpoch(ErrorCode.INVALID_TRANSACTION_TIMEOUT)
        meta = self._txns.get(transactional_id)
        if meta is None:
            if not self._make_room(now):
                return ProducerIdAndEpoch(ErrorCode.COORDINATOR_LOAD_IN_PROGRESS)
            meta = TransactionMetadata(transactional_id, self._allocate(), timeout_ms, now)
            self._txns[transactional_id] = meta
            self._schedule_expiration(now)
        if expected is not None and not _may_resume(meta, *expected):
            return ProducerIdAndEpoch(ErrorCode.PRODUCER_FENCED)
        if meta.state in COMPLETING:
            return ProducerIdAndEpoch(ErrorCode.CONCURRENT_TRANSACTIONS)
        if meta.state is TxnState.ONGOING:
            # Abort the open transaction under a bumped epoch (fencing its producer) and
            # let this one retry: the retry bumps the epoch again.
            self._fence_and_abort(meta, now)
            return ProducerIdAndEpoch(ErrorCode.CONCURRENT_TRANSACTIONS)
        if meta.epoch_exhausted and (expected is None or expected[1] == meta.producer_epoch):
            meta.last_producer_epoch = meta.producer_epoch if expected is not None else NO_PRODUCER_EPOCH
            meta.previous_producer_id = meta.producer_id
            meta.producer_id = self._allocate()
            meta.producer_epoch = 0
        elif (
            expected is None or meta.producer_epoch == NO_PRODUCER_EPOCH or expected[1] == meta.producer_epoch
        ):
            meta.last_producer_epoch = NO_PRODUCER_EPOCH if expected is None else meta.producer_epoch
            meta.producer_epoch += 1
        elif expected[1] != meta.last_producer_epoch:
            return ProducerIdAndEpoch(ErrorCode.PRODUCER_FENCED)
        # else: a retry of an init that succeeded; the same answer again.
        meta.timeout_ms = timeout_ms
        meta.partitions.clear()
        last_start_ms, meta.start_ms = meta.start_ms, -1
        meta.transition(TxnState.EMPTY, now)
        self._persist(meta)
        if self.config.init_keeps_start_ms:
            meta.start_ms = last_start_ms  # written -1, kept in memory (TransactionConfig)
        return ProducerIdAndEpoch(ErrorCode.NONE, meta.producer_id, meta.producer_epoch)

    # --- AddPartitionsToTxn, AddOffsetsToTxn, Produce ------------------------------------

    def add_partitions(
        self,
        transactional_id: str,
        producer_id: int,
        producer_epoch: int,
        partitions: Collection[TopicPartition],
        client_version: int,
        now: int,
    ) -> Outcome[ErrorCode]:
        """Partitions join the transaction (starting it if none is ongoing). The error,
        if any, applies to every partition."""
        return self._call(
            (transactional_id,),
            lambda: self._add_partitions(
                transactional_id, producer_id, producer_epoch, partitions, client_version, now
            ),
        )

    def _add_partitions(
        self,
        transactional_id: str,
        producer_id: int,
        producer_epoch: int,
        partitions: Collection[TopicPartition],
        client_version: int,
        now: int,
    ) -> ErrorCode:
        if not transactional_id:
            return ErrorCode.INVALID_REQUEST
        meta = self._txns.get(transactional_id)
        error = _producer_error(meta, producer_id, producer_epoch)
        if error is not None:
            return error
        assert meta is not None
        if meta.state in COMPLETING:
            return ErrorCode.CONCURRENT_TRANSACTIONS
        if meta.state is TxnState.ONGOING:
            if meta.partitions.issuperset(partitions):
                return ErrorCode.NONE
            meta.client_version = max(meta.client_version, client_version)
        else:
            meta.start_ms = now
            meta.client_version = client_version
            self._schedule(("timeout", transactional_id), now + meta.timeout_ms)
        meta.partitions.update(partitions)
        meta.transition(TxnState.ONGOING, now)
        self._persist(meta)
        return ErrorCode.NONE

    def verify_partition(
        self, transactional_id: str, producer_id: int, producer_epoch: int, partition: TopicPartition
    ) -> ErrorCode:
        """Is `partition` in this producer's ongoing transaction? (Kafka's
        AddPartitionsToTxn verify_only, which a broker asks before a transactional append.)"""
        if not transactional_id:
            return ErrorCode.INVALID_REQUEST
        meta = self._txns.get(transactional_id)
        error = _producer_error(meta, producer_id, producer_epoch)
        if error is not None:
            return error
        assert meta is not None
        if meta.state in COMPLETING:
            return ErrorCode.CONCURRENT_TRANSACTIONS
        if meta.state is TxnState.ONGOING and partition in meta.partitions:
            return ErrorCode.NONE
        return ErrorCode.TRANSACTION_ABORTABLE

    # --- EndTxn -----------------------------------------------------------------------

    def end_transaction(
        self,
        transactional_id: str,
        producer_id: int,
        producer_epoch: int,
        commit: bool,
        client_version: int,
        now: int,
    ) -> Outcome[ProducerIdAndEpoch]:
        """EndTxn: the answer carries the producer id and epoch the producer goes on with
        (changed only under transaction version 2, which bumps the epoch every time)."""
        return self._call(
            (transactional_id,),
            lambda: self._end_transaction(
                transactional_id, producer_id, producer_epoch, commit, client_version, now
            ),
        )

    def _end_transaction(
        self,
        transactional_id: str,
        producer_id: int,
        producer_epoch: int,
        commit: bool,
        client_version: int,
        now: int,
    ) -> ProducerIdAndEpoch:
        if not transactional_id:
            return ProducerIdAndEpoch(ErrorCode.INVALID_REQUEST)
        meta = self._txns.get(transactional_id)
        if meta is None:
            return ProducerIdAndEpoch(ErrorCode.INVALID_PRODUCER_ID_MAPPING)
        checked = end_check(meta, producer_id, producer_epoch, commit, client_version >= TV2)
        if isinstance(checked, ProducerIdAndEpoch):
            return checked
        return self._prepare_end(meta, commit, client_version, now, no_partitions=checked.no_partitions)

    def _prepare_end(
        self,
        meta: TransactionMetadata,
        commit: bool,
        client_version: int,
        now: int,
        *,
        no_partitions: bool = False,
        fencing: bool = False,
    ) -> ProducerIdAndEpoch:
        """Ongoing (or, under TV2, nothing) -> PrepareCommit / PrepareAbort, record and markers."""
        meta.client_version = client_version
        if meta.bumps_epoch_per_transaction:
            if meta.epoch_exhausted and not fencing:
                # The epoch cannot go on: the next transaction runs under a new producer id.
                meta.next_producer_id = self._allocate()
            if meta.producer_epoch < MAX_EPOCH:
                meta.last_producer_epoch = meta.producer_epoch
                meta.producer_epoch += 1
        if no_partitions:
            # TV2 aborts without a transaction; Kafka still wants a start time.
            meta.start_ms = now
        meta.transition(TxnState.PREPARE_COMMIT if commit else TxnState.PREPARE_ABORT, now)
        self._schedule(("timeout", meta.transactional_id), None)
        self._persist(meta)
        self._queue_markers(meta, set(meta.partitions))
        if meta.next_producer_id != NO_PRODUCER_ID:
            return ProducerIdAndEpoch(ErrorCode.NONE, meta.next_producer_id, 0)
        return ProducerIdAndEpoch(ErrorCode.NONE, meta.producer_id, meta.producer_epoch)

    def _fence_and_abort(self, meta: TransactionMetadata, now: int) -> None:
        """Kafka's PrepareEpochFence: bump the epoch so the markers (and every later
        request) fence the producer, then abort under it."""
        meta.transition(TxnState.PREPARE_EPOCH_FENCE, now)
        if meta.producer_epoch < MAX_EPOCH:
            meta.producer_epoch += 1
        meta.last_producer_epoch = NO_PRODUCER_EPOCH
        self._prepare_end(meta, False, self.config.transaction_version, now, fencing=True)

    # --- markers ------------------------------------------------------------------------

    def _queue_markers(self, meta: TransactionMetadata, partitions: set[TopicPartition]) -> None:
        self._unmarked[meta.transactional_id] = partitions
        self._markers.append(
            Completion(
                meta.transactional_id,
                meta.producer_id,
                meta.producer_epoch,
                meta.state is TxnState.PREPARE_COMMIT,
                frozenset(partitions),
            )
        )

    def markers_written(
        self, completion: Completion, results: Mapping[TopicPartition, ErrorCode], now: int
    ) -> Outcome[None]:
        """The markers of `completion` were written (or failed, per partition): complete
        the transaction once every partition has one; retry the others later."""
        return self._call(
            (completion.transactional_id,), lambda: self._markers_written(completion, results, now)
        )

    def _markers_written(
        self, completion: Completion, results: Mapping[TopicPartition, ErrorCode], now: int
    ) -> None:
        meta = self._txns.get(completion.transactional_id)
        unmarked = self._unmarked.get(completion.transactional_id)
        if meta is None or unmarked is None or meta.state not in COMPLETING:
            return
        if (meta.producer_id, meta.producer_epoch) != (completion.producer_id, completion.producer_epoch):
            return
        unmarked -= {tp for tp, code in results.items() if code in MARKER_SETTLED}
        if unmarked:
            self._schedule(("markers", meta.transactional_id), now + MARKER_RETRY_MS)
            return
        del self._unmarked[meta.transactional_id]
        self._complete(meta, now)

    def retry_markers(self, transactional_id: str, now: int) -> Outcome[None]:
        """The transaction's completion could not be written: its markers (and record) are
        tried again MARKER_RETRY_MS from now."""
        return self._call((), lambda: self._schedule(("markers", transactional_id), now + MARKER_RETRY_MS))

    def _complete(self, meta: TransactionMetadata, now: int) -> None:
        commit = meta.state is TxnState.PREPARE_COMMIT
        if meta.bumps_epoch_per_transaction and meta.next_producer_id != NO_PRODUCER_ID:
            meta.previous_producer_id = meta.producer_id
            meta.producer_id = meta.next_producer_id
            meta.producer_epoch = 0
            meta.next_producer_id = NO_PRODUCER_ID
        meta.partitions.clear()
        meta.transition(TxnState.COMPLETE_COMMIT if commit else TxnState.COMPLETE_ABORT, now)
        self._persist(meta)

    # --- deadlines ----------------------------------------------------------------------

    def on_timer(self, key: Hashable, now: int) -> Outcome[None]:
        """A deadline passed: time out a transaction, retry its markers, expire idle ids."""
        assert isinstance(key, tuple)
        kind, *rest = key
        if kind == "expire":
            return self._call((), lambda: self._expire(now))  # _forget keeps each id it drops
        return self._call((rest[0],), lambda: self._fire(kind, rest[0], now))

    def _fire(self, kind: str, transactional_id: str, now: int) -> None:
        meta = self._txns.get(transactional_id)
        if meta is None:
            return
        if kind == "timeout" and meta.state is TxnState.ONGOING:
            self._fence_and_abort(meta, now)
        elif kind == "markers" and meta.state in COMPLETING:
            self._queue_markers(meta, self._unmarked.get(meta.transactional_id, set(meta.partitions)))

    def _schedule_expiration(self, now: int) -> None:
        if self._txns and not self._expiry_set:
            self._expiry_set = True
            self._schedule(("expire",), now + self.config.expiration_check_interval_ms)

    def _expire(self, now: int) -> None:
        """Forget transactional ids idle for transactional.id.expiration.ms (a tombstone each)."""
        self._expiry_set = False  # it fired
        self._forget(self._expirable(now), now)
        self._schedule_expiration(now)

    def _forget(self, expired: Iterable[TransactionMetadata], now: int) -> None:
        """The ids `expired` are gone: dead, dropped, a tombstone each."""
        for meta in expired:
            self._keep(meta.transactional_id)
            meta.transition(TxnState.DEAD, now)
            del self._txns[meta.transactional_id]
            self._records.append(TransactionRecord(meta.transactional_id, None))

    def _make_room(self, now: int) -> bool:
        """Room for one more id under transactional.id.max.count. Kafka keeps ids until
        transactional.id.expiration.ms; past the cap, the least recently used idle ones (those
        that expiry would take: no transaction open or completing) expire now instead, as
        expiry does (a tombstone each, written with the new id's record), EVICTED_SHARE of the
        cap at a time so the scan is paid once per many new ids. Their producers, should they
        come back, are answered as after expiry (INVALID_PRODUCER_ID_MAPPING until they call
        InitProducerId again). False when every kept id has a transaction open: the client
        retries (COORDINATOR_LOAD_IN_PROGRESS) until a timeout or commit frees one."""
        cap = self.config.max_ids
        if len(self._txns) < cap:
            return True
        wanted = len(self._txns) - cap + max(1, int(cap * EVICTED_SHARE))
        idle = (meta for meta in self._txns.values() if meta.state in EXPIRABLE)
        self._forget(heapq.nsmallest(wanted, idle, key=lambda meta: meta.last_update_ms), now)
        return len(self._txns) < cap

    def _expirable(self, now: int) -> list[TransactionMetadata]:
        """The ids idle for transactional.id.expiration.ms in a state that may expire."""
        cutoff = now - self.config.id_expiration_ms
        return [m for m in self._txns.values() if m.state in EXPIRABLE and m.last_update_ms <= cutoff]

    # --- admin ------------------------------------------------------------------------

    def list_transactions(
        self, states: Collection[str], producer_ids: Collection[int], min_duration_ms: int, now: int
    ) -> tuple[list[TransactionListing], list[str]]:
        """ListTransactions: the matching transactions, and the state filters not known."""
        unknown = [name for name in states if name not in STATES_BY_NAME]
        wanted = {STATES_BY_NAME[name] for name in states if name in STATES_BY_NAME}
        listings = [
            TransactionListing(meta.transactional_id, meta.producer_id, meta.state)
            for meta in self._txns.values()
            if (not producer_ids or meta.producer_id in producer_ids)
            and (not states or meta.state in wanted)
            and (min_duration_ms < 0 or now - meta.start_ms > min_duration_ms)
        ]
        return listings, unknown

    def completing(self, transactional_id: str) -> bool:
        """Is the transaction PrepareCommit / PrepareAbort (its markers not all written yet)?"""
        meta = self._txns.get(transactional_id)
        return meta is not None and meta.state in COMPLETING

    def describe(self, transactional_id: str) -> TransactionDescription | None:
        meta = self._txns.get(transactional_id)
        if meta is None:
            return None
        partitions = self._unmarked.get(transactional_id, meta.partitions)
        return TransactionDescription(
            transactional_id,
            meta.state,
            meta.timeout_ms,
            meta.start_ms,
            meta.producer_id,
            meta.producer_epoch,
            frozenset(partitions),
        )


def _may_resume(meta: TransactionMetadata, producer_id: int, producer_epoch: int) -> bool:
    """KIP-360: may a producer holding (producer_id, producer_epoch) re-initialise? Yes if
    the id has no epoch yet (an idempotent producer turning transactional), if it is the
    current producer id (the epoch is checked next), or if it is the previous one and its
    epoch was exhausted (a retry of the init that moved to a new producer id)."""
    return (
        meta.producer_epoch == NO_PRODUCER_EPOCH
        or producer_id == meta.producer_id
        or (producer_id == meta.previous_producer_id and producer_epoch >= MAX_EPOCH - 1)
    )


def _producer_error(
    meta: TransactionMetadata | None, producer_id: int, producer_epoch: int
) -> ErrorCode | None:
    if meta is None or meta.producer_id != producer_id:
        return ErrorCode.INVALID_PRODUCER_ID_MAPPING
    if meta.producer_epoch != producer_epoch:
        return ErrorCode.PRODUCER_FENCED
    return None
