"""Log compaction as a pure function, checked with kafka-python's client-side
reader (MemoryRecords validates every rewritten batch's CRC and computes
offsets and timestamps as a consumer does), and MemoryLog compaction under a
running broker with librdkafka consuming the result.
"""

from __future__ import annotations

import uuid

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from kafka.record.default_records import DefaultRecordBatch
from kafka.record.memory_records import MemoryRecords

from kafka_shim.protocol.record_codec import (
    DELETE_HORIZON_FLAG,
    GZIP,
    ZSTD,
    Record,
    decode_batches,
    encode_batch,
)
from kafka_shim.protocol.records import CONTROL_FLAG, TRANSACTIONAL_FLAG, RecordBatches, iter_headers
from kafka_shim.storage.compaction import compact, last_records, latest_offsets
from kafka_shim.storage.memory import MemoryLog
from kafka_shim.storage.producer_state import LastRecord

DAY = 86_400_000
NOW = 10 * DAY


def batch(base: int, *kv: tuple[bytes | None, bytes | None], **fields: int) -> bytes:
    records = [Record(base + i, 1_000 + base + i, k, v) for i, (k, v) in enumerate(kv)]
    return encode_batch(records, **fields)


def clean(*blobs: bytes, now: int = NOW, producers: dict[int, LastRecord] | None = None) -> bytes:
    return compact(
        blobs, latest_offsets(blobs), now_ms=now, delete_retention_ms=DAY, active_producers=producers
    )


def consumer_view(data: bytes) -> list[tuple[int, int, bytes | None, bytes | None]]:
    out = []
    records = MemoryRecords(data)
    while (b := records.next_batch()) is not None:
        assert isinstance(b, DefaultRecordBatch) and b.validate_crc()
        out += [(r.offset, r.timestamp, r.key, r.value) for r in b]
    return out


def test_only_the_newest_record_per_key_survives_at_its_offset() -> None:
    first = batch(0, (b"a", b"1"), (b"b", b"1"), (b"a", b"2"))
    second = batch(3, (b"c", b"1"), (b"b", b"2"))
    cleaned = clean(first, second)
    assert [(o, k, v) for o, _, k, v in consumer_view(cleaned)] == [
        (2, b"a", b"2"),
        (3, b"c", b"1"),
        (4, b"b", b"2"),
    ]
    headers = list(iter_headers(cleaned))
    # Base offsets and last offset deltas are the originals: offsets never move.
    assert [(h.base_offset, h.last_offset) for h in headers] == [(0, 2), (3, 4)]


def test_an_unchanged_batch_keeps_its_bytes() -> None:
    only = batch(0, (b"a", b"1"), (b"b", b"1"))
    assert clean(only) == only


def test_a_batch_left_empty_disappears() -> None:
    old = batch(0, (b"a", b"1"))
    assert clean(old, batch(1, (b"a", b"2"))) == batch(1, (b"a", b"2"))


def test_records_without_keys_are_dropped() -> None:
    cleaned = clean(batch(0, (None, b"x"), (b"k", b"v"), (None, b"y")))
    assert [(o, k) for o, _, k, _ in consumer_view(cleaned)] == [(1, b"k")]


def test_later_segments_of_the_round_supersede_through_the_map() -> None:
    first = batch(0, (b"a", b"1"), (b"b", b"1"))
    later = batch(2, (b"a", b"2"))  # cleaned in another group of the same round
    cleaned = compact([first], latest_offsets([first, later]), now_ms=NOW, delete_retention_ms=DAY)
    assert [(o, k) for o, _, k, _ in consumer_view(cleaned)] == [(1, b"b")]


def test_tombstones_get_a_delete_horizon_then_go_once_it_passes() -> None:
    data = batch(0, (b"a", b"1"), (b"a", None), (b"b", b"1"))
    first = clean(data)
    (header,) = iter_headers(first)
    assert header.attributes & DELETE_HORIZON_FLAG and header.base_timestamp == NOW + DAY
    # Timestamps are re-based on the horizon, so consumers see the originals.
    assert consumer_view(first) == [(1, 1_001, b"a", None), (2, 1_002, b"b", b"1")]
    assert clean(first, now=NOW + DAY - 1) == first
    gone = clean(first, now=NOW + DAY)
    assert [(o, k) for o, _, k, _ in consumer_view(gone)] == [(2, b"b")]
    assert next(iter_headers(gone)).last_offset == 2


@pytest.mark.parametrize("codec", [GZIP, ZSTD])
def test_rewritten_batches_keep_compression_and_producer_fields(codec: int) -> None:
    fields = {
        "attributes": codec,
        "producer_id": 7,
        "producer_epoch": 2,
        "base_sequence": 40,
        "partition_leader_epoch": 3,
    }
    data = batch(10, (b"a", b"1"), (b"a", b"2"), (b"b", b"1"), **fields)
    (header,) = iter_headers(clean(data))
    assert (header.compression, header.producer_id, header.producer_epoch) == (codec, 7, 2)
    assert (header.base_sequence, header.last_sequence, header.partition_leader_epoch) == (40, 42, 3)
    assert (header.base_offset, header.last_offset, header.records_count) == (10, 12, 2)
    if codec == GZIP:
        assert [(o, v) for o, _, _, v in consumer_view(clean(data))] == [(11, b"2"), (12, b"1")]


def test_an_active_producers_last_batch_stays_as_an_empty_header() -> None:
    old = batch(0, (b"a", b"1"), producer_id=5, producer_epoch=1, base_sequence=0)
    last = batch(1, (b"a", b"2"), producer_id=5, producer_epoch=1, base_sequence=1, attributes=GZIP)
    newer = batch(2, (b"a", b"3"))
    blobs = (old, last, newer)
    producers = last_records(blobs)
    assert producers == {5: LastRecord(1, 1)}
    cleaned = clean(*blobs, producers=producers)
    headers = list(iter_headers(cleaned))
    assert [(h.base_offset, h.records_count, h.producer_id) for h in headers] == [(1, 0, 5), (2, 1, -1)]
    empty = headers[0]
    assert (empty.last_sequence, empty.producer_epoch, empty.compression) == (1, 1, 0)
    RecordBatches.parse(cleaned)  # CRCs valid
    assert consumer_view(cleaned)[-1][0] == 2


def test_a_marker_stays_as_it_is_while_its_transaction_has_a_batch() -> None:
    data = batch(0, (b"a", b"1"), attributes=TRANSACTIONAL_FLAG, producer_id=3, producer_epoch=0)
    marker = encode_batch(
        [Record(1, 5, b"\x00\x00\x00\x01", b"\x00\x00\x00\x00\x00\x00")],
        attributes=CONTROL_FLAG | TRANSACTIONAL_FLAG,
        producer_id=3,
        producer_epoch=0,
    )
    assert clean(data, marker) == data + marker


_ops = st.lists(st.tuples(st.sampled_from([b"a", b"b", b"c", None]), st.booleans()), min_size=1, max_size=30)


@settings(max_examples=80, deadline=None)
@given(_ops, st.integers(1, 5))
def test_compaction_matches_a_model(ops: list[tuple[bytes | None, bool]], per_batch: int) -> None:
    records = [Record(i, i, key, None if tomb else str(i).encode()) for i, (key, tomb) in enumerate(ops)]
    blobs = [encode_batch(records[i : i + per_batch]) for i in range(0, len(records), per_batch)]
    newest = {r.key: r for r in records if r.key is not None}
    expected = sorted((r.offset, r.key, r.value) for r in newest.values())
    first = compact(blobs, latest_offsets(blobs), now_ms=NOW, delete_retention_ms=DAY)
    assert [(r.offset, r.key, r.value) for b in decode_batches(first) for r in b.records] == expected
    later = compact([first], latest_offsets([first]), now_ms=NOW + DAY, delete_retention_ms=DAY)
    assert [(r.offset, r.key) for b in decode_batches(later) for r in b.records] == [
        (o, k) for o, k, v in expected if v is not None
    ]


# --- MemoryLog ---------------------------------------------------------------------------


def test_memory_log_compaction_keeps_offsets_and_reads_across_gaps() -> None:
    log = MemoryLog()
    for i in range(6):
        log.append(RecordBatches.parse(batch(0, (b"k" if i < 5 else b"other", str(i).encode()))))
    assert log.compact(NOW, DAY) == 2
    assert (log.log_start_offset, log.log_end_offset) == (0, 6)
    assert [(o, v) for o, _, _, v in consumer_view(log.read(0, 1 << 20))] == [(4, b"4"), (5, b"5")]
    assert [o for o, *_ in consumer_view(log.read(2, 1 << 20))] == [4, 5]  # a fetch in a gap
    assert log.max_timestamp() is not None
    next_offset = log.append(RecordBatches.parse(batch(0, (b"k", b"6")))).base_offset
    assert next_offset == 6


@pytest.mark.clients
def test_a_compacted_memory_topic_consumed_by_librdkafka(kafka_shim) -> None:  # type: ignore[no-untyped-def]
    from confluent_kafka import Consumer, Producer

    topic = f"compacted-{uuid.uuid4().hex[:6]}"
    kafka_shim.broker.topics.create(topic, 1, {"cleanup.policy": "compact"})
    producer = Producer({"bootstrap.servers": kafka_shim.bootstrap, "compression.type": "lz4"})
    for i in range(30):
        producer.produce(topic, key=f"key-{i % 3}".encode(), value=f"v{i}".encode())
        producer.flush()  # one batch each, so compaction has batches to drop
    kafka_shim.broker.topics.partition(topic, 0).compact(NOW, DAY)  # the broker is idle meanwhile
    consumer = Consumer(
        {"bootstrap.servers": kafka_shim.bootstrap, "group.id": topic, "auto.offset.reset": "earliest"}
    )
    consumer.subscribe([topic])
    seen: list[tuple[int | None, bytes | None, bytes | None]] = []
    try:
        while len(seen) < 3:
            message = consumer.poll(10)
            assert message is not None and message.error() is None
            seen.append((message.offset(), message.key(), message.value()))
    finally:
        consumer.close()
    assert seen == [(27, b"key-0", b"v27"), (28, b"key-1", b"v28"), (29, b"key-2", b"v29")]
