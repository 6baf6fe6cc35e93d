"""Transactional offset commits in `__consumer_offsets`: written as a transactional
batch of the committing producer, replayed as Kafka's loader does (applied at a
COMMIT marker of that producer, dropped at an ABORT, still pending without one),
in memory and in real segment files across a crash.
"""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

import pytest

from kafka_shim.protocol.control_records import EndTxnMarker, build_marker_batch, parse_marker
from kafka_shim.protocol.offsets_records import OffsetKey, OffsetsRecord, OffsetValue
from kafka_shim.protocol.record_codec import Record, batch_keyed_records, build_batch, decode_batches
from kafka_shim.protocol.records import CONTROL_FLAG, TRANSACTIONAL_FLAG, CorruptRecords
from kafka_shim.storage.disk_store import DiskStore
from kafka_shim.storage.log import PartitionLog
from kafka_shim.storage.memory import MemoryLog
from kafka_shim.storage.offsets_log import OFFSETS_TOPIC, OffsetsLog
from kafka_shim.storage.topics import TopicStore
from tests.storage.logs import options

PRODUCER = 7000
OTHER = 7001
EPOCH = 2
KEY = OffsetKey("g", "in", 0)
OTHER_KEY = OffsetKey("g", "in", 1)


def value(offset: int) -> OffsetValue:
    return OffsetValue(offset, -1, "", 1_000)


def plain(offset: int | None, key: OffsetKey = KEY) -> OffsetsRecord:
    return OffsetsRecord(key, None if offset is None else value(offset))


def txn(offset: int, producer: int = PRODUCER, key: OffsetKey = KEY) -> OffsetsRecord:
    return OffsetsRecord(key, value(offset), producer, EPOCH)


def write_marker(partition: PartitionLog, producer_id: int, commit: bool) -> None:
    """A transaction marker as Kafka writes it, placed at the log end."""
    partition.write_txn_marker(producer_id, EPOCH, commit, 0, 1_000)


def the_partition(offsets_log: OffsetsLog) -> PartitionLog:
    topic = offsets_log.topic
    assert topic is not None and len(topic.partitions) == 1
    return topic.partitions[0]


# --- the write path -----------------------------------------------------------------------


def test_transactional_records_are_a_transactional_batch_of_their_producer() -> None:
    offsets_log = OffsetsLog(TopicStore(lambda topic, partition: MemoryLog()), partitions=1)
    offsets_log.append([plain(1), txn(2), txn(3, key=OTHER_KEY), plain(4)], now_ms=5)
    offsets_log.append([txn(5)], now_ms=6)
    offsets_log.append([OffsetsRecord(KEY, value(6), PRODUCER, EPOCH + 1)], now_ms=7)
    batches = list(decode_batches(the_partition(offsets_log).read(0, 1 << 20)))
    shapes = [
        (b.header.is_transactional, b.header.producer_id, b.header.producer_epoch, b.header.base_sequence)
        for b in batches
    ]
    assert shapes == [
        (False, -1, -1, -1),
        (True, PRODUCER, EPOCH, 0),
        (False, -1, -1, -1),
        (True, PRODUCER, EPOCH, 2),  # the log's sequence check holds across appends
        (True, PRODUCER, EPOCH + 1, 0),  # a new epoch starts over
    ]
    assert [len(b.records) for b in batches] == [1, 2, 1, 1, 1]
    assert [b.header.base_offset for b in batches] == [0, 1, 3, 4, 5]


# --- replay -------------------------------------------------------------------------------


class Replay(NamedTuple):
    name: str
    steps: tuple[OffsetsRecord | tuple[int, bool], ...]  # records, or (producer, commit) markers
    replayed: list[OffsetsRecord]


COMMIT, ABORT = True, False
REPLAYS = [
    Replay("committed", (plain(1), txn(2), (PRODUCER, COMMIT)), [plain(2)]),
    Replay("aborted", (plain(1), txn(2), (PRODUCER, ABORT)), [plain(1)]),
    Replay("no marker yet: still pending, in log order", (plain(1), txn(2)), [plain(1), txn(2)]),
    Replay("another producer's marker", (txn(2), (OTHER, COMMIT)), [txn(2)]),
    Replay("a plain write after it wins", (txn(2), plain(3), (PRODUCER, COMMIT)), [plain(3)]),
    Replay("a plain write before it loses", (plain(3), txn(2), (PRODUCER, COMMIT)), [plain(2)]),
    Replay("a tombstone drops it", (txn(2), plain(None), (PRODUCER, COMMIT)), [plain(None)]),
    Replay(
        "the producer's next transaction",
        (txn(2), (PRODUCER, COMMIT), txn(5)),
        [plain(2), txn(5)],
    ),
    Replay(
        "two producers: the later write wins whoever commits first",
        (txn(2), txn(6, OTHER), (OTHER, COMMIT), (PRODUCER, COMMIT)),
        [plain(6)],
    ),
    Replay(
        "two producers, one aborted",
        (txn(2, key=OTHER_KEY), txn(6, OTHER), (PRODUCER, ABORT), (OTHER, COMMIT)),
        [plain(6)],
    ),
]


def write(offsets_log: OffsetsLog, steps: tuple[OffsetsRecord | tuple[int, bool], ...]) -> None:
    for step in steps:
        if isinstance(step, OffsetsRecord):
            offsets_log.append([step], now_ms=1_000)
        else:
            write_marker(the_partition(offsets_log), *step)


@pytest.mark.parametrize("case", REPLAYS, ids=lambda c: c.name)
def test_replay_in_memory(case: Replay) -> None:
    offsets_log = OffsetsLog(TopicStore(lambda topic, partition: MemoryLog()), partitions=1)
    write(offsets_log, case.steps)
    assert list(offsets_log.replay()) == case.replayed


@pytest.mark.parametrize("case", REPLAYS, ids=lambda c: c.name)
def test_replay_from_segment_files_after_a_crash(tmp_path: Path, case: Replay) -> None:
    store = DiskStore(tmp_path, options())
    write(OffsetsLog(store.topics, partitions=1), case.steps)
    store.data_dir.unlock()  # killed: no clean shutdown

    again = DiskStore(tmp_path, options())
    try:
        assert list(OffsetsLog(again.topics, partitions=1).replay()) == case.replayed
    finally:
        again.close()


def test_an_unreadable_marker_counts_as_an_abort(caplog: pytest.LogCaptureFixture) -> None:
    offsets_log = OffsetsLog(TopicStore(lambda topic, partition: MemoryLog()), partitions=1)
    write(offsets_log, (plain(1), txn(2)))
    partition = the_partition(offsets_log)
    base = partition.log_end_offset
    garbled = build_batch(
        [Record(base, 1_000, b"\xff\xff\x00\x01", b"")],
        attributes=CONTROL_FLAG | TRANSACTIONAL_FLAG,
        producer_id=PRODUCER,
        producer_epoch=EPOCH,
    )
    partition._write(garbled)
    assert list(offsets_log.replay()) == [plain(1)]
    assert f"{OFFSETS_TOPIC}-0: control batch at {base} read as an abort" in caplog.text


@pytest.mark.parametrize(
    ("key", "value", "read"),
    [
        (b"\x00\x00\x00\x01", b"\x00\x00\x00\x00\x00\x05", EndTxnMarker(True, 5)),
        (b"\x00\x00\x00\x00", b"\x00\x00\x00\x00\x00\x05", EndTxnMarker(False, 5)),
        # Later versions: Kafka parses them as the current one.
        (b"\x00\x01\x00\x01", b"\x00\x03\x00\x00\x00\x05", EndTxnMarker(True, 5)),
        (b"\x00\x00\x00\x05", None, None),  # another control type: not a marker
    ],
)
def test_control_records(key: bytes, value: bytes | None, read: EndTxnMarker | None) -> None:
    assert parse_marker(key, value, 0) == read


@pytest.mark.parametrize(
    ("key", "value"),
    [(None, None), (b"\x00\x00", None), (b"\xff\xff\x00\x01", b"\x00" * 6), (b"\x00\x00\x00\x01", None)],
)
def test_unreadable_control_records_are_corrupt(key: bytes | None, value: bytes | None) -> None:
    with pytest.raises(CorruptRecords):
        parse_marker(key, value, 0)


def test_marker_bytes_are_kafkas() -> None:
    # EndTransactionMarker: key version 0, type 1 (COMMIT); value version 0, coordinator epoch.
    placed = build_marker_batch(
        EndTxnMarker(True, 7),
        offset=3,
        producer_id=9,
        producer_epoch=1,
        timestamp_ms=1,
        partition_leader_epoch=0,
    )
    [(offset, key, value)] = batch_keyed_records(placed.data, placed.first)
    assert (offset, key, value) == (3, b"\x00\x00\x00\x01", b"\x00\x00\x00\x00\x00\x07")
    assert placed.first.is_control and placed.first.is_transactional
