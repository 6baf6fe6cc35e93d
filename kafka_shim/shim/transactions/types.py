"""The transaction coordinator's configuration, answers and timings."""

from __future__ import annotations

from typing import NamedTuple

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.protocol.releases import TV2
from kafka_shim.shim.coordinator.outcome import TransactionMarkers
from kafka_shim.shim.coordinator.types import TopicPartition
from kafka_shim.shim.transactions.state import NO_PRODUCER_EPOCH, NO_PRODUCER_ID, TxnState

# A marker that could not be written is tried again after this long.
MARKER_RETRY_MS = 500
# A deadline whose record could not be written (a timed-out transaction's abort, the expiry
# of idle ids) fires again after this long: Kafka's next check of timed-out transactions
# (transaction.abort.timed.out.transaction.cleanup.interval.ms, 10000 by default) retries it.
DEADLINE_RETRY_MS = 10_000
# Marker results that settle a partition: written, or the partition (or its producer) is gone.
MARKER_SETTLED = frozenset(
    {ErrorCode.NONE, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, ErrorCode.INVALID_PRODUCER_EPOCH}
)
# Past transactional.id.max.count, this share of it (1%) of the least recently used idle ids
# expires at once: room for many new ids per scan of the kept ones.
EVICTED_SHARE = 0.01

# The markers a transaction ending in PrepareCommit / PrepareAbort needs: the outcome of the
# call that ended it brings them, and the writer writes them (transactions.service).
Completion = TransactionMarkers


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
