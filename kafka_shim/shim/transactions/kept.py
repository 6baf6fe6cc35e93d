"""The transaction coordinator a broker opens at start-up, and again when a client deletes
__transaction_state: the log and the service over it, replayed (transactions found preparing
to commit or abort get their markers before the broker serves anyone)."""

from __future__ import annotations

from collections.abc import Callable

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.shim.config.broker_config import BrokerConfig
from kafka_shim.shim.coordinator.outcome import TransactionMarkers
from kafka_shim.shim.coordinator.types import TopicPartition
from kafka_shim.shim.transactions.coordinator import TransactionConfig
from kafka_shim.shim.transactions.markers import COORDINATOR_EPOCH, MarkerWriter, write_markers
from kafka_shim.shim.transactions.pending_markers import PendingMarkers
from kafka_shim.shim.transactions.service import TransactionService
from kafka_shim.storage.topics import TopicStore
from kafka_shim.storage.transaction_log import TransactionLog


def transaction_config(config: BrokerConfig) -> TransactionConfig:
    return TransactionConfig(
        max_timeout_ms=config.transaction_max_timeout_ms,
        id_expiration_ms=config.transactional_id_expiration_ms,
        max_ids=config.max_transactional_ids,
        expiration_check_interval_ms=config.transaction_id_expiration_check_interval_ms,
        transaction_version=config.transaction_version,
        init_keeps_start_ms=config.release.init_keeps_transaction_start,
    )


def open_transactions(
    config: BrokerConfig,
    transaction_version: int,
    topics: TopicStore,
    allocate_producer_id: Callable[[], int],
    markers_to: MarkerWriter,
    clock: Callable[[], int],
    failed: Callable[[str, Exception], None],
    elsewhere: PendingMarkers | None = None,
) -> tuple[TransactionLog, TransactionService]:
    """`transaction_version` is the finalized feature level; markers are written to the
    partitions of `markers_to` (the broker); `failed` logs timer-side work that raised. A
    broker process (shim.processes) gives `elsewhere`, which keeps the markers of partitions
    other processes lead for its sender; without it every marker is written here."""
    transaction_log = TransactionLog(topics, config.transaction_state_log_num_partitions, transaction_version)

    def write_here(markers: TransactionMarkers, now: int) -> dict[TopicPartition, ErrorCode]:
        return write_markers(
            markers_to,
            markers.producer_id,
            markers.producer_epoch,
            COORDINATOR_EPOCH,
            markers.commit,
            markers.partitions,
            now,
        )

    def write_here_or_send(markers: TransactionMarkers, now: int) -> dict[TopicPartition, ErrorCode]:
        """A broker process writes the partitions it leads; the others wait for their leaders."""
        assert elsewhere is not None
        return write_here(markers._replace(partitions=elsewhere.split(markers, now)), now)

    transactions = TransactionService(
        transaction_config(config)._replace(transaction_version=transaction_version),
        allocate_producer_id,
        transaction_log,
        clock,
        write_here if elsewhere is None else write_here_or_send,
        failed,
    )
    transactions.load(transaction_log.replay(), clock())
    return transaction_log, transactions
