"""The transaction log: the internal topic `__transaction_state`, written and replayed.

The transaction coordinator emits `TransactionRecord`s; `append` writes them, in
Kafka's TransactionLogKey/Value format, to the partition Kafka would pick for the
transactional id (`abs(transactionalId.hashCode) % partitions`, as for groups);
`replay` reads back the latest record of every id at start-up. One write path, one
recovery path. The topic is compacted, like Kafka's, so replay time follows the
live transactional ids rather than the number of transactions.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Sequence

from kafka_shim.protocol.record_codec import Record, batch_keyed_records, build_batch
from kafka_shim.protocol.records import RecordsError, iter_headers
from kafka_shim.protocol.transaction_records import TransactionRecord, decode_record, encode_record
from kafka_shim.protocol.types import ProtocolError
from kafka_shim.storage.memory import MemoryLog
from kafka_shim.storage.memory_compaction import MemoryCompaction
from kafka_shim.storage.offsets_log import (
    OFFSETS_SEGMENT_BYTES,
    READ_CHUNK_BYTES,
    partition_for,
)
from kafka_shim.storage.topics import Topic, TopicStore

log = logging.getLogger(__name__)

TRANSACTION_TOPIC = "__transaction_state"
# Compacted with small segments, for the reason the offsets topic has them: start-up
# replays the uncleaned active segment whole (Kafka: transaction.state.log.segment.bytes,
# 100 MiB).
# Kafka's transactionTopicConfigs, as DescribeConfigs shows them. min.insync.replicas is
# Kafka's transaction.state.log.min.isr (default 2), which a single broker must set to 1.
TRANSACTION_TOPIC_CONFIGS = {
    "cleanup.policy": "compact",
    "compression.type": "uncompressed",
    "min.insync.replicas": "1",
    "segment.bytes": str(OFFSETS_SEGMENT_BYTES),
    "unclean.leader.election.enable": "false",
}


class TransactionLog:
    """`__transaction_state` in a TopicStore, created with `partitions` partitions when
    the first record is written; a topic found on disk keeps its own count, and the count
    it had when first opened places every transactional id (as the offsets log's does).
    `transaction_version` (the finalized feature level, which UpdateFeatures may change)
    picks the value version."""

    def __init__(self, topics: TopicStore, partitions: int, transaction_version: int) -> None:
        self._topics = topics
        self._new_partitions = partitions
        self.transaction_version = transaction_version
        self._placed_by: int | None = None
        self._memory_compaction = MemoryCompaction()

    @property
    def topic(self) -> Topic | None:
        return self._topics.get(TRANSACTION_TOPIC)

    def _open(self) -> Topic:
        topic = self.topic
        if topic is None:
            topic = self._topics.create(TRANSACTION_TOPIC, self._new_partitions, TRANSACTION_TOPIC_CONFIGS)
        return topic

    def create_if_missing(self) -> None:
        """Kafka makes the topic when a client first looks for a transaction's coordinator."""
        self._open()

    @property
    def partitions(self) -> int:
        """The partition count transactional ids are placed by (pinned once the topic exists)."""
        if self._placed_by is None:
            topic = self.topic
            if topic is None:
                return self._new_partitions
            self._placed_by = len(topic.partitions)
        return self._placed_by

    def append(self, records: Sequence[TransactionRecord], now_ms: int) -> None:
        """One uncompressed batch per partition, records in emission order; the log applies
        its fsync policy before it returns, so a transition is durable before it is answered."""
        partitions = self._open().partitions
        count = self.partitions
        by_partition: dict[int, list[tuple[bytes, bytes | None]]] = {}
        for record in records:
            index = partition_for(record.transactional_id, count)
            by_partition.setdefault(index, []).append(encode_record(record, self.transaction_version))
        for index, keys_values in by_partition.items():
            partition = partitions[index]
            base = partition.log_end_offset
            batch = [Record(base + i, now_ms, key, value) for i, (key, value) in enumerate(keys_values)]
            partition.append(build_batch(batch, partition_leader_epoch=partition.leader_epoch))
            if isinstance(partition, MemoryLog):
                self._memory_compaction.step(index, partition, now_ms)

    def replay(self) -> Iterator[TransactionRecord]:
        """The latest record of every transactional id, as compaction leaves the log;
        records that are not Kafka's are skipped with a warning."""
        topic = self.topic
        for index, partition in enumerate(topic.partitions if topic is not None else ()):
            latest: dict[bytes | None, bytes | None] = {}
            offset = partition.log_start_offset
            while offset < partition.log_end_offset:
                data = partition.read(offset, READ_CHUNK_BYTES)
                if not data:
                    break
                for header in iter_headers(data):
                    offset = header.last_offset + 1
                    try:
                        latest.update((key, value) for _, key, value in batch_keyed_records(data, header))
                    except RecordsError as exc:
                        log.warning(
                            "%s-%d: batch at %d skipped: %s",
                            TRANSACTION_TOPIC,
                            index,
                            header.base_offset,
                            exc,
                        )
            for key, value in latest.items():
                try:
                    yield decode_record(key, value)
                except ProtocolError as exc:
                    log.warning("%s-%d: record skipped: %s", TRANSACTION_TOPIC, index, exc)
