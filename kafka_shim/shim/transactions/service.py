"""The transaction service: the transaction coordinator with the writer that carries out its
outcomes (groups.effects.EffectWriter over `__transaction_state`), its deadlines, and the
step that writes a transaction's markers to its partitions and completes it. Handlers call it
and get the coordinator's answer once its records are written; a call whose records could not
be written raises StorageError with Kafka's coordinator error, having changed nothing."""

from __future__ import annotations

import logging
from collections.abc import Callable, Collection, Hashable, Iterable, Mapping

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.protocol.transaction_records import TransactionRecord
from kafka_shim.shim.coordinator.outcome import TransactionMarkers
from kafka_shim.shim.coordinator.types import TopicPartition
from kafka_shim.shim.effects import CoordinatorLog, EffectWriter
from kafka_shim.shim.transactions.coordinator import TransactionCoordinator
from kafka_shim.shim.transactions.types import (
    DEADLINE_RETRY_MS,
    ProducerIdAndEpoch,
    TransactionConfig,
    TransactionDescription,
    TransactionListing,
)
from kafka_shim.storage.errors import StorageError

log = logging.getLogger(__name__)

# Writes a transaction's markers at `now`: each partition's result (transactions.markers).
WriteMarkers = Callable[[TransactionMarkers, int], Mapping[TopicPartition, ErrorCode]]


class TransactionService:
    def __init__(
        self,
        config: TransactionConfig,
        allocate_producer_id: Callable[[], int],
        transaction_log: CoordinatorLog,
        clock: Callable[[], int],
        write_markers: WriteMarkers,
        failed: Callable[[str, Exception], None],
    ) -> None:
        """`failed` logs timer-side work that raised (shim.timer_failures)."""
        self.coordinator = TransactionCoordinator(config, allocate_producer_id)
        self._write_markers = write_markers
        self._failed = failed
        self.writer = EffectWriter(
            transaction_log, clock, retry_backoff_ms=DEADLINE_RETRY_MS, markers=self._complete
        )

    @property
    def config(self) -> TransactionConfig:
        return self.coordinator.config

    @config.setter
    def config(self, config: TransactionConfig) -> None:
        self.coordinator.config = config

    def load(self, records: Iterable[TransactionRecord], now: int) -> None:
        """The coordinator rebuilt from `__transaction_state`; transactions found preparing to
        commit or abort get their markers now, before the broker serves anyone."""
        self.writer.apply(self.coordinator.load(records, now))

    # --- the coordinator's calls, carried out ---------------------------------------------

    def init_producer_id(
        self, transactional_id: str, timeout_ms: int, expected: tuple[int, int] | None, now: int
    ) -> ProducerIdAndEpoch:
        return self.writer.apply(
            self.coordinator.init_producer_id(transactional_id, timeout_ms, expected, now)
        )

    def add_partitions(
        self,
        transactional_id: str,
        producer_id: int,
        producer_epoch: int,
        partitions: Collection[TopicPartition],
        client_version: int,
        now: int,
    ) -> ErrorCode:
        return self.writer.apply(
            self.coordinator.add_partitions(
                transactional_id, producer_id, producer_epoch, partitions, client_version, now
            )
        )

    def verify_partition(
        self, transactional_id: str, producer_id: int, producer_epoch: int, partition: TopicPartition
    ) -> ErrorCode:
        return self.coordinator.verify_partition(transactional_id, producer_id, producer_epoch, partition)

    def end_transaction(
        self,
        transactional_id: str,
        producer_id: int,
        producer_epoch: int,
        commit: bool,
        client_version: int,
        now: int,
    ) -> ProducerIdAndEpoch:
        """EndTxn: the Prepare record written, then the markers, then the Complete record,
        before the answer (a marker or completion that fails is retried by its deadline)."""
        return self.writer.apply(
            self.coordinator.end_transaction(
                transactional_id, producer_id, producer_epoch, commit, client_version, now
            )
        )

    def markers_written(
        self, completion: TransactionMarkers, results: Mapping[TopicPartition, ErrorCode], now: int
    ) -> None:
        self.writer.apply(self.coordinator.markers_written(completion, results, now))

    def list_transactions(
        self, states: Collection[str], producer_ids: Collection[int], min_duration_ms: int, now: int
    ) -> tuple[list[TransactionListing], list[str]]:
        return self.coordinator.list_transactions(states, producer_ids, min_duration_ms, now)

    def completing(self, transactional_id: str) -> bool:
        return self.coordinator.completing(transactional_id)

    def describe(self, transactional_id: str) -> TransactionDescription | None:
        return self.coordinator.describe(transactional_id)

    # --- deadlines and markers ---------------------------------------------------------

    def next_deadline(self) -> int | None:
        return self.writer.deadlines.earliest()

    def tick(self, now: int) -> None:
        """Fire every deadline due by `now`: time out transactions, retry markers, expire ids.
        Each deadline's records are written before the next fires. One whose records cannot
        be written (a StorageError; or anything else raised, such as a timestamp its record
        cannot hold) leaves the ids it concerned as they were and fires again
        DEADLINE_RETRY_MS later; the first error is raised once the others have fired."""
        self.writer.fire_due(now, self._fire)

    def _fire(self, key: Hashable, now: int) -> None:
        self.writer.apply(self.coordinator.on_timer(key, now))

    def _complete(self, markers: TransactionMarkers) -> None:
        """Write a transaction's markers, then complete it. A marker that cannot be written (a
        full disk; or anything else raised, such as a timestamp a marker cannot hold) is
        retried by the coordinator's markers deadline, and so is a completion whose record
        cannot be written. Nothing raises out of here: it runs after EndTxn and on the timer."""
        now = self.writer.clock()
        try:
            results = self._write_markers(markers, now)
        except Exception as exc:  # every marker is tried again, as a failed write is
            self._failed("transaction markers", exc)
            results = dict.fromkeys(markers.partitions, ErrorCode.UNKNOWN_SERVER_ERROR)
        self.markers_answered(markers, results, now)

    def markers_answered(
        self, markers: TransactionMarkers, results: Mapping[TopicPartition, ErrorCode], now: int
    ) -> None:
        """Markers written (or refused), here or by their leader in another broker process
        (transactions.pending_markers): the transaction completes once every partition has
        one. A completion whose record cannot be written is retried by the markers deadline;
        nothing raises out of here."""
        try:
            self.writer.apply(self.coordinator.markers_written(markers, results, now))
        except Exception as exc:  # put back by the outcome's undo; its markers retried
            if isinstance(exc, StorageError):
                log.warning("transaction %s not completed yet: %s", markers.transactional_id, exc.message)
            else:
                self._failed("transaction markers", exc)
            self.writer.apply(self.coordinator.retry_markers(markers.transactional_id, now))
