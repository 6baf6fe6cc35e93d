"""The transaction coordinator as a pure state machine (Kafka's TransactionCoordinator).

Nothing here reads a clock, sleeps or does I/O: every call takes `now` (ms). Like
the group coordinator, every change is queued as a `__transaction_state` record
(`take_records`) and `on_records` is called at the end of the public call that
made it, so the owner appends it before answering. A transaction that moves to
PrepareCommit / PrepareAbort also queues a `Completion` (`take_completions`): the
owner writes its markers and reports back with `markers_written`, which completes
the transaction (CompleteCommit / CompleteAbort, another record).

Deadlines by key:
  ("timeout", id)   an ongoing transaction's transaction.timeout.ms: fence and abort
  ("markers", id)   retry the markers that could not be written
  ("expire",)       the periodic transactional.id.expiration.ms check
"""

from __future__ import annotations

import copy
import functools
import heapq
from collections.abc import Callable, Collection, Hashable, Iterable, Mapping
from typing import Concatenate, NamedTuple, ParamSpec, TypeVar

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.protocol.transaction_records import TransactionRecord, TransactionValue
from kafka_shim.shim.coordinator.timers import Deadlines
from kafka_shim.shim.coordinator.types import TopicPartition
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

# A marker that could not be written is tried again after this long.
MARKER_RETRY_MS = 500
# A deadline whose record could not be written (a timed-out transaction's abort, the expiry
# of idle ids) fires again after this long: Kafka's next check of timed-out transactions
# (transaction.abort.timed.out.transaction.cleanup.interval.ms, 10000 by default) retries it.
DEADLINE_RETRY_MS = 10_000
# Marker results that settle a partition: written, or the partition (or its producer) is gone.
_MARKER_SETTLED = frozenset(
    {ErrorCode.NONE, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, ErrorCode.INVALID_PRODUCER_EPOCH}
)
# Past transactional.id.max.count, this share of it (1%) of the least recently used idle ids
# expires at once: room for many new ids per scan of the kept ones.
EVICTED_SHARE = 0.01
# Transaction protocol versions: TV2 bumps the epoch per transaction (KIP-890 part 2).
TV1, TV2 = 0, 2


class TransactionConfig(NamedTuple):
    max_timeout_ms: int = 900_000  # transaction.max.timeout.ms
    id_expiration_ms: int = 604_800_000  # transactional.id.expiration.ms
    # transactional.id.max.count (kafka-shim's own): the most ids kept; see _make_room.
    max_ids: int = 100_000
    # transaction.remove.expired.transaction.cleanup.interval.ms
    expiration_check_interval_ms: int = 3_600_000
    # The finalized transaction.version: the coordinator's own aborts (timeouts, fencing)
    # follow it rather than the client's protocol, as in Kafka.
    transaction_version: int = TV2
    # Kafka 3.9-4.1 (Release.init_keeps_transaction_start): InitProducerId writes a start
    # time of -1 but keeps the last transaction's in memory, where DescribeTransactions and
    # ListTransactions' duration filter read it.
    init_keeps_start_ms: bool = False


class ProducerIdAndEpoch(NamedTuple):
    error: ErrorCode
    producer_id: int = NO_PRODUCER_ID
    producer_epoch: int = NO_PRODUCER_EPOCH


class Completion(NamedTuple):
    """Markers to write: the transaction's partitions, with the epoch it ends under."""

    transactional_id: str
    producer_id: int
    producer_epoch: int
    commit: bool
    partitions: frozenset[TopicPartition]


class TransactionListing(NamedTuple):
    transactional_id: str
    producer_id: int
    state: TxnState


class TransactionDescription(NamedTuple):
    transactional_id: str
    state: TxnState
    timeout_ms: int
    start_ms: int
    producer_id: int
    producer_epoch: int
    partitions: frozenset[TopicPartition]


P = ParamSpec("P")
R = TypeVar("R")


def _publishing(
    method: Callable[Concatenate[TransactionCoordinator, P], R],
) -> Callable[Concatenate[TransactionCoordinator, P], R]:
    """A public call: whatever records it queued are handed to `on_records` before it returns.
    When they cannot be written (StorageError from `on_records`, or any other error), the
    transactional id it concerned is put back as it was and the error goes to the caller."""

    @functools.wraps(method)
    def call(self: TransactionCoordinator, *args: P.args, **kwargs: P.kwargs) -> R:
        subject = args[0]  # a transactional id, or the Completion of one
        transactional_id = subject if isinstance(subject, str) else subject.transactional_id  # type: ignore[attr-defined]
        kept = self._keep(transactional_id)
        try:
            return method(self, *args, **kwargs)
        finally:
            try:
                self._publish()
            except Exception:  # StorageError, or a record that cannot be encoded
                # Write, then change memory: the id goes back to what the log says.
                now = args[-1]  # every such call's last argument
                assert isinstance(now, int)
                self._restore(kept, now)
                raise

    return call


# The deadlines kept per transactional id.
_PER_ID_DEADLINES = ("timeout", "markers")


class _Kept(NamedTuple):
    transactional_id: str
    meta: TransactionMetadata | None
    unmarked: set[TopicPartition] | None
    deadlines: dict[str, int | None]
    completions: int


class TransactionCoordinator:
    def __init__(self, config: TransactionConfig, allocate_producer_id: Callable[[], int]) -> None:
        self.config = config
        self._allocate = allocate_producer_id
        self._txns: dict[str, TransactionMetadata] = {}
        self._deadlines = Deadlines()
        self._records: list[TransactionRecord] = []
        self._completions: list[Completion] = []
        # Partitions of a PrepareCommit / PrepareAbort transaction still without a marker.
        self._unmarked: dict[str, set[TopicPartition]] = {}
        self.on_records: Callable[[], None] = lambda: None

    # --- records and completions ------------------------------------------------------

    def take_records(self) -> list[TransactionRecord]:
        taken, self._records = self._records, []
        return taken

    def take_completions(self) -> list[Completion]:
        taken, self._completions = self._completions, []
        return taken

    def _publish(self) -> None:
        if self._records:
            self.on_records()

    def _keep(self, transactional_id: str) -> _Kept:
        """What a call may change of one transactional id, to put back if its record is not
        written: its metadata, its partitions without markers, its deadlines, the queue of
        completions (a call queues only its own)."""
        return _Kept(
            transactional_id,
            copy.deepcopy(self._txns.get(transactional_id)),
            set(self._unmarked[transactional_id]) if transactional_id in self._unmarked else None,
            {kind: self._deadlines.at((kind, transactional_id)) for kind in _PER_ID_DEADLINES},
            len(self._completions),
        )

    def _restore(self, kept: _Kept, now: int) -> None:
        transactional_id = kept.transactional_id
        if kept.meta is None:
            self._txns.pop(transactional_id, None)
        else:
            self._txns[transactional_id] = kept.meta
        if kept.unmarked is None:
            self._unmarked.pop(transactional_id, None)
        else:
            self._unmarked[transactional_id] = kept.unmarked
        for kind, at in kept.deadlines.items():
            if at is None:
                self._deadlines.cancel((kind, transactional_id))
            else:
                self._deadlines.schedule((kind, transactional_id), at)
        del self._completions[kept.completions :]
        self._records.clear()
        if kept.meta is not None and kept.meta.state in COMPLETING:
            # Its completion was taken and not written: try its markers and record again.
            self._deadlines.schedule(("markers", transactional_id), now + MARKER_RETRY_MS)

    def _persist(self, meta: TransactionMetadata) -> None:
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
        self._records.append(TransactionRecord(meta.transactional_id, value))

    def load(self, records: Iterable[TransactionRecord], now: int) -> None:
        """Rebuild from `__transaction_state` (the latest record of each id). Transactions
        found preparing to commit or abort queue their markers again; ongoing ones time out
        as they would have."""
        for record in records:
            if record.value is None:
                self._txns.pop(record.transactional_id, None)
                continue
            value = record.value
            self._txns[record.transactional_id] = TransactionMetadata(
                transactional_id=record.transactional_id,
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
        for meta in list(self._txns.values()):
            if meta.state is TxnState.DEAD:
                del self._txns[meta.transactional_id]
            elif meta.state is TxnState.ONGOING:
                self._deadlines.schedule(("timeout", meta.transactional_id), meta.start_ms + meta.timeout_ms)
            elif meta.state in COMPLETING:
                self._queue_markers(meta, set(meta.partitions))
        self._schedule_expiration(now)

    # --- InitProducerId ---------------------------------------------------------------

    @_publishing
    def init_producer_id(
        self, transactional_id: str, timeout_ms: int, expected: tuple[int, int] | None, now: int
    ) -> ProducerIdAndEpoch:
        """InitProducerId with a transactional id; `expected` is the (producer id, epoch)
        a v3+ producer already holds (KIP-360), None for a new producer."""
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

    @_publishing
    def add_partitions(
        self,
        transactional_id: str,
        producer_id: int,
        producer_epoch: int,
        partitions: Collection[TopicPartition],
        client_version: int,
        now: int,
    ) -> ErrorCode:
        """Partitions join the transaction (starting it if none is ongoing). The error,
        if any, applies to every partition."""
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
            self._deadlines.schedule(("timeout", transactional_id), now + meta.timeout_ms)
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

    @_publishing
    def end_transaction(
        self,
        transactional_id: str,
        producer_id: int,
        producer_epoch: int,
        commit: bool,
        client_version: int,
        now: int,
    ) -> ProducerIdAndEpoch:
        """EndTxn: the answer carries the producer id and epoch the producer goes on with
        (changed only under transaction version 2, which bumps the epoch every time)."""
        if not transactional_id:
            return ProducerIdAndEpoch(ErrorCode.INVALID_REQUEST)
        meta = self._txns.get(transactional_id)
        if meta is None:
            return ProducerIdAndEpoch(ErrorCode.INVALID_PRODUCER_ID_MAPPING)
        tv2 = client_version >= TV2
        state = meta.state
        completed = state in (TxnState.COMPLETE_COMMIT, TxnState.COMPLETE_ABORT)
        # TV2 bumps the epoch when a transaction ends: a request one epoch behind is a retry
        # whose answer was lost, and after an overflow the retry comes from the old producer id.
        retry_on_bump = tv2 and meta.producer_epoch == producer_epoch + 1
        retry_on_overflow = (
            tv2
            and meta.previous_producer_id == producer_id
            and producer_epoch == MAX_EPOCH - 1
            and meta.producer_epoch == 0
        )
        retry = retry_on_bump or retry_on_overflow
        if tv2 and state in COMPLETING:
            valid_epoch = retry_on_bump
        elif tv2 and completed:
            valid_epoch = retry or producer_epoch == meta.producer_epoch
        else:
            valid_epoch = producer_epoch == meta.producer_epoch
        if meta.producer_id != producer_id and not retry_on_overflow:
            return ProducerIdAndEpoch(ErrorCode.INVALID_PRODUCER_ID_MAPPING)
        if not valid_epoch:
            return ProducerIdAndEpoch(ErrorCode.PRODUCER_FENCED)
        same = ProducerIdAndEpoch(ErrorCode.NONE, meta.producer_id, meta.producer_epoch)
        invalid = ProducerIdAndEpoch(ErrorCode.INVALID_TXN_STATE)
        if state is TxnState.ONGOING:
            return self._prepare_end(meta, commit, client_version, now)
        if state is TxnState.COMPLETE_COMMIT:
            if commit:
                return same if retry or not tv2 else invalid
            return (
                self._prepare_end(meta, False, client_version, now, no_partitions=True)
                if tv2 and not retry
                else invalid
            )
        if state is TxnState.COMPLETE_ABORT:
            if commit:
                return invalid
            if retry or not tv2:
                return same
            return self._prepare_end(meta, False, client_version, now, no_partitions=True)
        if state in COMPLETING:
            concurrent = (state is TxnState.PREPARE_COMMIT) == commit
            return ProducerIdAndEpoch(ErrorCode.CONCURRENT_TRANSACTIONS) if concurrent else invalid
        if state is TxnState.EMPTY and tv2 and not commit:
            return self._prepare_end(meta, False, client_version, now, no_partitions=True)
        return invalid

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
        self._deadlines.cancel(("timeout", meta.transactional_id))
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
        self._completions.append(
            Completion(
                meta.transactional_id,
                meta.producer_id,
                meta.producer_epoch,
                meta.state is TxnState.PREPARE_COMMIT,
                frozenset(partitions),
            )
        )

    @_publishing
    def markers_written(
        self, completion: Completion, results: Mapping[TopicPartition, ErrorCode], now: int
    ) -> None:
        """The markers of `completion` were written (or failed, per partition): complete
        the transaction once every partition has one; retry the others later."""
        meta = self._txns.get(completion.transactional_id)
        unmarked = self._unmarked.get(completion.transactional_id)
        if meta is None or unmarked is None or meta.state not in COMPLETING:
            return
        if (meta.producer_id, meta.producer_epoch) != (completion.producer_id, completion.producer_epoch):
            return
        unmarked -= {tp for tp, code in results.items() if code in _MARKER_SETTLED}
        if unmarked:
            self._deadlines.schedule(("markers", meta.transactional_id), now + MARKER_RETRY_MS)
            return
        del self._unmarked[meta.transactional_id]
        self._complete(meta, now)

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

    # --- timers -----------------------------------------------------------------------

    def next_deadline(self) -> int | None:
        return self._deadlines.earliest()

    def tick(self, now: int) -> None:
        """Fire every deadline due by `now`: time out transactions, retry markers, expire ids.
        Each deadline's records are written before the next fires. One whose records cannot
        be written (a StorageError; or anything else raised, such as a timestamp its record
        cannot hold) leaves the ids it concerned as they were and fires again
        DEADLINE_RETRY_MS later; the first error is raised once the others have fired."""
        failed: list[Exception] = []

        def fire(key: Hashable, now: int) -> None:
            kept = [self._keep(transactional_id) for transactional_id in self._concerned(key, now)]
            try:
                self._fire(key, now)
                self._publish()
            except Exception as exc:
                for one in kept:
                    self._restore(one, now)
                self._deadlines.schedule(key, now + DEADLINE_RETRY_MS)
                failed.append(exc)

        self._deadlines.fire_due(now, fire)
        if failed:
            raise failed[0]

    def _concerned(self, key: Hashable, now: int) -> list[str]:
        """The transactional ids a deadline may change."""
        assert isinstance(key, tuple)
        if key[0] != "expire":
            return [key[1]]
        return [meta.transactional_id for meta in self._expirable(now)]

    def _fire(self, key: Hashable, now: int) -> None:
        assert isinstance(key, tuple)
        kind, *rest = key
        if kind == "expire":
            self._expire(now)
            return
        meta = self._txns.get(rest[0])
        if meta is None:
            return
        if kind == "timeout" and meta.state is TxnState.ONGOING:
            self._fence_and_abort(meta, now)
        elif kind == "markers" and meta.state in COMPLETING:
            self._queue_markers(meta, self._unmarked.get(meta.transactional_id, set(meta.partitions)))

    def _schedule_expiration(self, now: int) -> None:
        if self._txns and ("expire",) not in self._deadlines:
            self._deadlines.schedule(("expire",), now + self.config.expiration_check_interval_ms)

    def _expire(self, now: int) -> None:
        """Forget transactional ids idle for transactional.id.expiration.ms (a tombstone each)."""
        self._forget(self._expirable(now), now)
        self._schedule_expiration(now)

    def _forget(self, expired: Iterable[TransactionMetadata], now: int) -> None:
        """The ids `expired` are gone: dead, dropped, a tombstone each."""
        for meta in expired:
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
