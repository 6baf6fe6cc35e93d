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

from kafka_shim.protocol.internal_topics import TRANSACTION_TOPIC
from kafka_shim.protocol.transaction_records import TransactionRecord, decode_record, encode_record
from kafka_shim.protocol.types import ProtocolError
from kafka_shim.storage.internal_log import InternalLog
from kafka_shim.storage.offsets_log import OFFSETS_SEGMENT_BYTES, partition_for
from kafka_shim.storage.topics import TopicStore

log = logging.getLogger(__name__)

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


class TransactionLog(InternalLog):
    """`__transaction_state` in a TopicStore, created with `partitions` partitions when
    the first record is written; transactional ids are placed as InternalLog places keys.
    `transaction_version` (the finalized feature level, which UpdateFeatures may change)
    picks the value version."""

    def __init__(self, topics: TopicStore, partitions: int, transaction_version: int) -> None:
        super().__init__(topics, TRANSACTION_TOPIC, partitions, TRANSACTION_TOPIC_CONFIGS)
        self.transaction_version = transaction_version

    def append(self, records: Sequence[TransactionRecord], now_ms: int) -> None:
        """One uncompressed batch per partition, records in emission order; the log applies
        its fsync policy before it returns, so a transition is durable before it is answered."""
        partitions = self._open().partitions
        count = self.partitions
        version = self.transaction_version
        by_partition: dict[int, list[tuple[bytes, bytes | None]]] = {}
        for record in records:
            index = partition_for(record.transactional_id, count)
            by_partition.setdefault(index, []).append(encode_record(record, version))
        for index, keys_values in by_partition.items():
            self._append_plain(index, partitions[index], keys_values, now_ms)

    def replay(self) -> Iterator[TransactionRecord]:
        """The latest record of every transactional id, as compaction leaves the log;
        records that are not Kafka's are skipped with a warning."""
        topic = self.topic
        for index, partition in enumerate(topic.partitions if topic is not None else ()):
            latest: dict[bytes | None, bytes | None] = {}
            for _, records in self._scan(index, partition):
                latest.update((key, value) for _, key, value in records)
            for key, value in latest.items():
                try:
                    yield decode_record(key, value)
                except ProtocolError as exc:
                    log.warning("%s-%d: record skipped: %s", TRANSACTION_TOPIC, index, exc)
