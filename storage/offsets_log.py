"""The offsets log: the internal topic `__consumer_offsets`, written and replayed.

The group coordinator emits `OffsetsRecord`s (offset commits, group metadata,
their tombstones); `append` writes them, in Kafka's key/value formats, to the
partition Kafka would pick for the group; `replay` reads every partition back
in offset order at start-up, and the coordinator rebuilds its groups from it.
One write path, one recovery path. The topic is compacted
(cleanup.policy=compact), so replay time follows the live keys, not the
history of commits.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Iterator, Sequence

from kafka_shim.protocol.offsets_records import OffsetsRecord, decode_record, encode_record
from kafka_shim.protocol.record_codec import Record, batch_keyed_records, build_batch
from kafka_shim.protocol.records import RecordsError, iter_headers
from kafka_shim.protocol.types import ProtocolError
from kafka_shim.storage.log import LEADER_EPOCH, PartitionLog
from kafka_shim.storage.memory import MemoryLog
from kafka_shim.storage.topics import Topic, TopicStore

log = logging.getLogger(__name__)

OFFSETS_TOPIC = "__consumer_offsets"
# Compacted, as Kafka's. Segments of 4 MiB instead of Kafka's 100 MiB
# (offsets.topic.segment.bytes): the cleaner never touches the active segment and
# start-up replays it whole, so its size bounds recovery time (bench/offsets_recovery.py).
OFFSETS_SEGMENT_BYTES = 4 * 1024 * 1024
OFFSETS_TOPIC_CONFIGS = {"cleanup.policy": "compact", "segment.bytes": str(OFFSETS_SEGMENT_BYTES)}
READ_CHUNK_BYTES = 8 * 1024 * 1024
# Kafka's delete.retention.ms default: how long compaction keeps tombstones.
DELETE_RETENTION_MS = 24 * 3600 * 1000
# In memory nothing else cleans the topic: a partition is compacted once it holds
# this many batches and twice what survived its last clean (amortised O(1) per append),
# a step of this many batches per append, so no request waits for a whole pass
# (a step costs well under a millisecond; a pass over 100k batches, seconds).
MEMORY_COMPACTION_MIN_BATCHES = 1_000
MEMORY_COMPACTION_STEP_BATCHES = 100
_PASS_DONE = object()
_INT32_MASK = 0xFFFFFFFF


def java_string_hash(text: str) -> int:
    """Java's String.hashCode: s[0]*31^(n-1) + ... over UTF-16 code units, as a signed int32."""
    h = 0
    units = text.encode("utf-16-be")
    for i in range(0, len(units), 2):
        h = (31 * h + (units[i] << 8 | units[i + 1])) & _INT32_MASK
    return h - (1 << 32) if h >= 1 << 31 else h


@functools.lru_cache(maxsize=4096)  # on every commit; the hash loops over the group id in Python
def partition_for(group_id: str, partitions: int) -> int:
    """Kafka's Utils.abs(groupId.hashCode) % partitions (abs maps Integer.MIN_VALUE to 0)."""
    h = java_string_hash(group_id)
    return (0 if h == -(1 << 31) else abs(h)) % partitions


class OffsetsLog:
    """`__consumer_offsets` in a TopicStore. Like Kafka, the topic is created when the
    first group needs it (here: its first record), with `partitions` partitions; a
    topic found on disk keeps its own partition count."""

    def __init__(self, topics: TopicStore, partitions: int) -> None:
        self._topics = topics
        self._new_partitions = partitions
        self._memory_clean_at: dict[int, int] = {}  # partition -> batch count that starts its clean
        self._memory_cleaning: dict[int, Iterator[None]] = {}  # partition -> its pass under way

    @property
    def topic(self) -> Topic | None:
        return self._topics.get(OFFSETS_TOPIC)

    def _open(self) -> Topic:
        topic = self.topic
        if topic is None:
            topic = self._topics.create(OFFSETS_TOPIC, self._new_partitions, OFFSETS_TOPIC_CONFIGS)
        return topic

    @property
    def partitions(self) -> int:
        topic = self.topic
        return self._new_partitions if topic is None else len(topic.partitions)

    def partition_for(self, group_id: str) -> int:
        return partition_for(group_id, self.partitions)

    def append(self, records: Sequence[OffsetsRecord], now_ms: int) -> None:
        """One uncompressed batch per partition, records in emission order, stamped `now_ms`.
        The log applies its fsync policy before it returns (storage.durability)."""
        partitions = self._open().partitions
        by_partition: dict[int, list[tuple[bytes, bytes | None]]] = {}
        for record in records:
            index = partition_for(record.group, len(partitions))
            by_partition.setdefault(index, []).append(encode_record(record))
        for index, keys_values in by_partition.items():
            partition = partitions[index]
            # Built where the log will place it, header included: its append neither
            # parses it back nor rewrites it (the template still checks the placement).
            base = partition.log_end_offset
            batch = [Record(base + i, now_ms, key, value) for i, (key, value) in enumerate(keys_values)]
            partition.append(build_batch(batch, partition_leader_epoch=LEADER_EPOCH))
            if isinstance(partition, MemoryLog):
                self._clean_memory_partition(index, partition, now_ms)

    def _clean_memory_partition(self, index: int, partition: MemoryLog, now_ms: int) -> None:
        """One step of the partition's compaction pass, started once it holds enough batches."""
        steps = self._memory_cleaning.get(index)
        if steps is None:
            if partition.batch_count < self._memory_clean_at.get(index, MEMORY_COMPACTION_MIN_BATCHES):
                return
            steps = partition.compaction_steps(now_ms, DELETE_RETENTION_MS, MEMORY_COMPACTION_STEP_BATCHES)
            self._memory_cleaning[index] = steps
        if next(steps, _PASS_DONE) is _PASS_DONE:
            del self._memory_cleaning[index]
            self._memory_clean_at[index] = max(MEMORY_COMPACTION_MIN_BATCHES, 2 * partition.batch_count)

    def replay(self) -> Iterator[OffsetsRecord]:
        """The latest record of every key, partition by partition: the log as compaction
        leaves it, whether or not the cleaner has run yet. Only those records are decoded
        with the schemas; records that are not Kafka's offsets records are skipped with a
        warning, as are undecodable batches."""
        topic = self.topic
        for index, partition in enumerate(topic.partitions if topic is not None else ()):
            latest: dict[bytes | None, bytes | None] = dict(_scan_partition(index, partition))
            for key, value in latest.items():
                try:
                    yield decode_record(key, value)
                except ProtocolError as exc:
                    log.warning("%s-%d: record skipped: %s", OFFSETS_TOPIC, index, exc)


def _scan_partition(index: int, partition: PartitionLog) -> Iterator[tuple[bytes | None, bytes | None]]:
    offset = partition.log_start_offset
    while offset < partition.log_end_offset:
        data = partition.read(offset, READ_CHUNK_BYTES)
        if not data:
            return
        for header in iter_headers(data):
            offset = header.last_offset + 1
            if header.is_control:
                continue
            try:
                for _, key, value in batch_keyed_records(data, header):
                    yield key, value
            except RecordsError as exc:
                log.warning("%s-%d: batch at %d skipped: %s", OFFSETS_TOPIC, index, header.base_offset, exc)
