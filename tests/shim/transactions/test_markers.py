"""write_markers: the one path that ends a transaction in its partitions, for the
transaction coordinator and the WriteTxnMarkers handler."""

from __future__ import annotations

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.protocol.records import RecordBatches
from kafka_shim.shim.coordinator.types import TopicPartition
from kafka_shim.shim.transactions.markers import write_markers
from kafka_shim.storage.log import AbortedTransaction, PartitionLog
from kafka_shim.storage.offsets_log import OFFSETS_TOPIC
from tests.batches import make_batch
from tests.helpers import Harness

PID = 5000


def transactional(log: PartitionLog, epoch: int = 0) -> None:
    data = make_batch([b"x"], producer_id=PID, producer_epoch=epoch, base_sequence=0, transactional=True)
    log.append(RecordBatches.parse(data))


def logs(h: Harness, *partitions: TopicPartition) -> list[PartitionLog]:
    found = [h.broker.topics.partition(p.topic, p.partition) for p in partitions]
    assert all(log is not None for log in found)
    return found  # type: ignore[return-value]


def test_abort_ends_the_transaction_in_every_partition() -> None:
    h = Harness()
    h.broker.topics.create("out", 2)
    h.broker.topics.create(OFFSETS_TOPIC, 1)
    partitions = [TopicPartition("out", 0), TopicPartition("out", 1), TopicPartition(OFFSETS_TOPIC, 0)]
    for log in logs(h, *partitions):
        transactional(log)
        assert log.last_stable_offset == 0
    results = write_markers(h.broker, PID, 0, 3, False, partitions, h.clock())
    assert results == dict.fromkeys(partitions, ErrorCode.NONE)
    for log in logs(h, *partitions):
        assert (log.log_end_offset, log.last_stable_offset) == (2, 2)
        assert log.aborted_transactions(0, 2) == [AbortedTransaction(PID, 0)]


def test_each_partition_answers_for_itself() -> None:
    h = Harness()
    h.broker.topics.create("out", 2)
    fenced, healthy = logs(h, TopicPartition("out", 0), TopicPartition("out", 1))
    transactional(fenced, epoch=2)  # a newer epoch wrote here: the marker's is stale
    transactional(healthy, epoch=1)
    partitions = [TopicPartition("out", 0), TopicPartition("out", 1), TopicPartition("gone", 0)]
    results = write_markers(h.broker, PID, 1, 0, True, partitions, h.clock())
    assert results == {
        TopicPartition("out", 0): ErrorCode.INVALID_PRODUCER_EPOCH,
        TopicPartition("out", 1): ErrorCode.NONE,
        TopicPartition("gone", 0): ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
    }
    assert (fenced.log_end_offset, fenced.last_stable_offset) == (1, 0)
    assert (healthy.log_end_offset, healthy.last_stable_offset) == (2, 2)
