"""Writing a completed transaction's COMMIT or ABORT markers to its partitions.

One function for both callers: the transaction coordinator when a transaction
completes (EndTxn, a timeout, recovery of PrepareCommit/PrepareAbort) and the
WriteTxnMarkers handler (the admin client's abortTransaction). A marker in a
`__consumer_offsets` partition also ends the producer's transactional offset
commits in the group coordinator, as Kafka's onTransactionCompleted does.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Protocol, TypeVar

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.shim.coordinator.types import TopicPartition
from kafka_shim.storage.errors import StorageError
from kafka_shim.storage.log import LEADER_EPOCH
from kafka_shim.storage.offsets_log import OFFSETS_TOPIC

if TYPE_CHECKING:
    from kafka_shim.storage.topics import TopicStore

T = TypeVar("T")

# The transaction log's partition leader epoch: one broker leads it forever.
COORDINATOR_EPOCH = LEADER_EPOCH


class TransactionalOffsets(Protocol):
    """The groups' side of a marker in `__consumer_offsets` (groups.service.GroupService is one)."""

    def transaction_completed(self, producer_id: int, commit: bool, now: int) -> None: ...


class MarkerWriter(Protocol):
    """What writing markers needs of the broker (shim.broker.Broker is one): its partitions and
    its group service. Named here, not imported, so that the broker, which completes
    transactions, and this module do not import each other."""

    @property
    def topics(self) -> TopicStore: ...

    @property
    def group_service(self) -> TransactionalOffsets: ...


def write_markers(
    broker: MarkerWriter,
    producer_id: int,
    producer_epoch: int,
    coordinator_epoch: int,
    commit: bool,
    partitions: Iterable[TopicPartition],
    now: int,
    transaction_version: int = 0,
) -> dict[TopicPartition, ErrorCode]:
    """Write the marker to each partition's log; the error of each partition
    (UNKNOWN_TOPIC_OR_PARTITION for one that does not exist, the log's refusal:
    INVALID_PRODUCER_EPOCH, TRANSACTION_COORDINATOR_FENCED). `transaction_version` is what a
    WriteTxnMarkers v2 marker says (KIP-1228): 2 asks the strict epoch check."""
    results: dict[TopicPartition, ErrorCode] = {}
    for partition in partitions:
        log = broker.topics.partition(partition.topic, partition.partition)
        if log is None:
            results[partition] = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
            continue
        try:
            log.write_txn_marker(
                producer_id, producer_epoch, commit, coordinator_epoch, now, transaction_version
            )
        except StorageError as exc:
            results[partition] = exc.code
            continue
        results[partition] = ErrorCode.NONE
    if any(p.topic == OFFSETS_TOPIC and code == ErrorCode.NONE for p, code in results.items()):
        # The marker in the log is the durable record: the coordinator writes none of its own.
        broker.group_service.transaction_completed(producer_id, commit, now)
    return results
