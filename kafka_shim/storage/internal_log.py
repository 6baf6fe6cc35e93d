"""What the broker's internal-topic logs share (`__consumer_offsets`, `__transaction_state`,
`__share_group_state`): the topic opened in a TopicStore when its first record needs it,
the partition count that places keys, each append's step of in-memory compaction, and the
scan that replays a partition at start-up. Each log adds its own records' format."""

from __future__ import annotations

import logging
from collections.abc import Iterator, Sequence

from kafka_shim.protocol.record_codec import batch_keyed_records, build_keyed_batch
from kafka_shim.protocol.records import BatchHeader, RecordsError, iter_headers
from kafka_shim.storage.log import PartitionLog
from kafka_shim.storage.memory import MemoryLog
from kafka_shim.storage.memory_compaction import MemoryCompaction
from kafka_shim.storage.topics import Topic, TopicStore

log = logging.getLogger(__name__)

# How much of a partition one read of a replay takes.
READ_CHUNK_BYTES = 8 * 1024 * 1024


class InternalLog:
    """Topic `name` in a TopicStore, created with `partitions` partitions and `configs` when
    first needed; a topic found on disk keeps its own count. Keys are placed by the count the
    topic had when first seen, as Kafka's coordinators read it once at start-up: a client
    growing the topic (CreatePartitions) moves no key until the next start."""

    def __init__(self, topics: TopicStore, name: str, partitions: int, configs: dict[str, str]) -> None:
        self._topics = topics
        self.name = name
        self._new_partitions = partitions
        self._configs = configs
        self._placed_by: int | None = None  # the pinned partition count, once the topic exists
        self._memory_compaction = MemoryCompaction()

    @property
    def topic(self) -> Topic | None:
        return self._topics.get(self.name)

    def _open(self) -> Topic:
        topic = self.topic
        if topic is None:
            topic = self._topics.create(self.name, self._new_partitions, self._configs)
        return topic

    def create_if_missing(self) -> None:
        """Kafka makes the topic when a client first looks for a coordinator it places."""
        self._open()

    @property
    def partitions(self) -> int:
        """The partition count keys are placed by (pinned once the topic exists)."""
        if self._placed_by is None:
            topic = self.topic
            if topic is None:
                return self._new_partitions
            self._placed_by = len(topic.partitions)
        return self._placed_by

    def _append_plain(
        self,
        index: int,
        partition: PartitionLog,
        keys_values: Sequence[tuple[bytes, bytes | None]],
        now_ms: int,
    ) -> None:
        """Records without a producer as one batch built where partition `index` places it
        (build_keyed_batch: build_batch's bytes without a Record each), appended without a
        producer's checks or a parse of its header, then its compaction step."""
        batch = build_keyed_batch(
            keys_values, partition.log_end_offset, now_ms, partition_leader_epoch=partition.leader_epoch
        )
        partition.append_placed(batch, now_ms)
        self._appended(index, partition, now_ms)

    def _appended(self, index: int, partition: PartitionLog, now_ms: int) -> None:
        """After an append to partition `index`: in memory, a step of its compaction."""
        if type(partition) is MemoryLog:  # isinstance asks the ABC: slower, on every commit
            self._memory_compaction.step(index, partition, now_ms)

    def _scan(
        self, index: int, partition: PartitionLog
    ) -> Iterator[tuple[BatchHeader, list[tuple[int, bytes | None, bytes | None]]]]:
        """Every batch of a partition with its records' offsets, keys and values, in log order;
        an undecodable batch is skipped with a warning."""
        offset = partition.log_start_offset
        while offset < partition.log_end_offset:
            data = partition.read(offset, READ_CHUNK_BYTES)
            if not data:
                return
            for header in iter_headers(data):
                offset = header.last_offset + 1
                try:
                    yield header, batch_keyed_records(data, header)
                except RecordsError as exc:
                    log.warning("%s-%d: batch at %d skipped: %s", self.name, index, header.base_offset, exc)
