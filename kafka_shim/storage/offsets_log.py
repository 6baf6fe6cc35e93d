"""The offsets log: the internal topic `__consumer_offsets`, written and replayed.

The group coordinator emits `OffsetsRecord`s (offset commits, group metadata,
their tombstones); `append` writes them, in Kafka's key/value formats, to the
partition Kafka would pick for the group; `replay` reads every partition back
in offset order at start-up, and the coordinator rebuilds its groups from it.
One write path, one recovery path. The topic is compacted
(cleanup.policy=compact), so replay time follows the live keys, not the
history of commits.

Offsets committed inside a transaction are written as a transactional batch of
the committing producer; the transaction's end puts a COMMIT or ABORT marker
after them (written by the transaction's completion). Replay applies them only
at a COMMIT marker of that producer, drops them at an ABORT, and hands back
those with no marker yet as still pending.
"""

from __future__ import annotations

import logging
from collections.abc import Collection, Iterable, Iterator, Sequence

from kafka_shim.protocol.control_records import parse_marker

# partition_for: Kafka's placement of a key, imported from here too.
from kafka_shim.protocol.internal_topics import OFFSETS_TOPIC, partition_for
from kafka_shim.protocol.offsets_records import OffsetsRecord, decode_record, encode_record
from kafka_shim.protocol.record_codec import build_keyed_batch
from kafka_shim.protocol.records import (
    NO_PRODUCER_ID,
    TRANSACTIONAL_FLAG,
    BatchHeader,
    CorruptRecords,
    RecordBatches,
)
from kafka_shim.protocol.types import ProtocolError
from kafka_shim.storage.internal_log import InternalLog
from kafka_shim.storage.log import PartitionLog
from kafka_shim.storage.topics import TopicStore

log = logging.getLogger(__name__)

# Compacted, as Kafka's. Segments of 4 MiB instead of Kafka's 100 MiB
# (offsets.topic.segment.bytes): the cleaner never touches the active segment and
# start-up replays it whole, so its size bounds recovery time (bench/offsets_recovery.py).
OFFSETS_SEGMENT_BYTES = 4 * 1024 * 1024
# Kafka's offsetsTopicConfigs: its overrides, as DescribeConfigs shows them.
OFFSETS_TOPIC_CONFIGS = {
    "cleanup.policy": "compact",
    "compression.type": "producer",
    "segment.bytes": str(OFFSETS_SEGMENT_BYTES),
}
# Consecutive records of one producer ((id, epoch); none, or a transaction's), encoded: one batch.
Run = tuple[tuple[int, int], list[tuple[bytes, bytes | None]]]


class OffsetsLog(InternalLog):
    """`__consumer_offsets` in a TopicStore. Like Kafka, the topic is created when the
    first group needs it (here: its first record), with `partitions` partitions; groups
    are placed as InternalLog places keys."""

    def __init__(self, topics: TopicStore, partitions: int) -> None:
        super().__init__(topics, OFFSETS_TOPIC, partitions, OFFSETS_TOPIC_CONFIGS)

    def partition_for(self, group_id: str) -> int:
        return partition_for(group_id, self.partitions)

    def append(self, records: Sequence[OffsetsRecord], now_ms: int) -> None:
        """Uncompressed batches stamped `now_ms`, records in emission order: one per
        partition and run of records of the same producer (none, or a transaction's).
        The log applies its fsync policy before it returns (storage.durability)."""
        partitions = self._open().partitions
        count = self.partitions
        if len(records) == 1:
            # A commit of one partition, what nearly every request writes: one batch, built
            # where the log places it, without the runs' lists.
            record = records[0]
            index = partition_for(record.key.group, count)
            partition = partitions[index]
            if record.producer_id == NO_PRODUCER_ID:  # a plain commit: no producer state to keep
                self._append_plain(index, partition, (encode_record(record),), now_ms)
            else:
                producer = (record.producer_id, record.producer_epoch)
                partition.append(_batch(partition, producer, [encode_record(record)], now_ms))
                self._appended(index, partition, now_ms)
            return
        by_partition: dict[int, list[Run]] = {}
        for record in records:
            runs = by_partition.setdefault(partition_for(record.key.group, count), [])
            producer = (record.producer_id, record.producer_epoch)
            if not runs or runs[-1][0] != producer:
                runs.append((producer, []))
            runs[-1][1].append(encode_record(record))
        for index, runs in by_partition.items():
            self._write(index, partitions[index], runs, now_ms)

    def _write(
        self,
        index: int,
        partition: PartitionLog,
        runs: list[Run],
        now_ms: int,
    ) -> None:
        for producer, keys_values in runs:
            partition.append(_batch(partition, producer, keys_values, now_ms))
        self._appended(index, partition, now_ms)

    def replay(self, partitions: Collection[int] | None = None) -> Iterator[OffsetsRecord]:
        """The latest record of every key, partition by partition: the log as compaction
        leaves it, whether or not the cleaner has run yet, with completed transactions
        applied; then the records of transactions still open, as their producer's. With
        any of those, a partition's records come in log order (what the coordinator needs
        to tell which write of a partition is newest). Only the records handed back are
        decoded with the schemas; records that are not Kafka's offsets records are
        skipped with a warning, as are undecodable batches. `partitions`: only these."""
        topic = self.topic
        for index, partition in enumerate(topic.partitions if topic is not None else ()):
            if partitions is not None and index not in partitions:
                continue
            for producer, key, value in _replay_partition(index, self._scan(index, partition)):
                try:
                    record = decode_record(key, value)
                except ProtocolError as exc:
                    log.warning("%s-%d: record skipped: %s", OFFSETS_TOPIC, index, exc)
                    continue
                yield record if producer is None else OffsetsRecord(record.key, record.value, *producer)


def _batch(
    partition: PartitionLog,
    producer: tuple[int, int],
    keys_values: list[tuple[bytes, bytes | None]],
    now_ms: int,
) -> RecordBatches:
    """Built where the log will place it, header included: its append neither parses it
    back nor rewrites it (the template still checks the placement). A transaction's
    records go in a transactional batch numbered as the log expects that producer's next."""
    base = partition.log_end_offset
    producer_id, epoch = producer
    if producer_id == NO_PRODUCER_ID:
        return build_keyed_batch(keys_values, base, now_ms, partition_leader_epoch=partition.leader_epoch)
    return build_keyed_batch(
        keys_values,
        base,
        now_ms,
        attributes=TRANSACTIONAL_FLAG,
        producer_id=producer_id,
        producer_epoch=epoch,
        base_sequence=partition.producers.next_sequence(producer_id, epoch),
        partition_leader_epoch=partition.leader_epoch,
    )


Written = tuple[int, bytes | None]  # a record's offset and value


def _replay_partition(
    index: int, batches: Iterable[tuple[BatchHeader, list[tuple[int, bytes | None, bytes | None]]]]
) -> Iterable[tuple[tuple[int, int] | None, bytes | None, bytes | None]]:
    """(producer, key, value) of the partition's live records; producer is None for
    committed ones, (id, epoch) for those of a transaction without a marker yet.

    As Kafka's loader: a COMMIT marker makes its producer's pending records committed
    unless the key was written again later in the log; an ABORT drops them; a plain
    tombstone drops pending records of its key too."""
    committed: dict[bytes | None, Written] = {}
    pending: dict[int, tuple[int, dict[bytes | None, Written]]] = {}  # producer id -> epoch, records
    for header, records in batches:
        if header.is_control:
            ended = pending.pop(header.producer_id, None)
            if ended is not None and _is_commit(index, header, records):
                for key, written in ended[1].items():
                    if key not in committed or committed[key][0] < written[0]:
                        committed[key] = written
        elif header.is_transactional:
            _, open_records = pending.setdefault(header.producer_id, (header.producer_epoch, {}))
            open_records.update((key, (offset, value)) for offset, key, value in records)
        else:
            for offset, key, value in records:
                committed[key] = (offset, value)
                if value is None:
                    for _, open_records in pending.values():
                        open_records.pop(key, None)
    if not any(open_records for _, open_records in pending.values()):
        return ((None, key, value) for key, (_, value) in committed.items())
    live: list[tuple[int, tuple[int, int] | None, bytes | None, bytes | None]]
    live = [(offset, None, key, value) for key, (offset, value) in committed.items()]
    for producer_id, (epoch, open_records) in pending.items():
        live.extend(
            (offset, (producer_id, epoch), key, value) for key, (offset, value) in open_records.items()
        )
    live.sort(key=lambda entry: entry[0])
    return ((producer, key, value) for _, producer, key, value in live)


def _is_commit(
    index: int, header: BatchHeader, records: list[tuple[int, bytes | None, bytes | None]]
) -> bool:
    """Whether a control batch is a COMMIT marker; anything unreadable counts as an abort
    (its records stay invisible), with a warning."""
    try:
        marker = parse_marker(records[0][1], records[0][2], header.base_offset) if records else None
    except CorruptRecords as exc:
        log.warning(
            "%s-%d: control batch at %d read as an abort: %s", OFFSETS_TOPIC, index, header.base_offset, exc
        )
        return False
    return marker is not None and marker.commit
