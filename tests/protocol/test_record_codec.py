"""Records inside v2 batches: decoded from and encoded for real clients.

kafka-python 3.0.12's DefaultRecordBatchBuilder / MemoryRecords (client code)
build and read uncompressed and gzip batches here; confluent-kafka (librdkafka)
produces every compression.type through a running broker and consumes batches
this codec encoded, so the four codecs are checked against a real client both ways.
"""

from __future__ import annotations

import struct
import uuid

import cramjam
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from kafka.record.default_records import DefaultRecordBatch, DefaultRecordBatchBuilder
from kafka.record.memory_records import MemoryRecords

from kafka_shim.protocol.record_codec import (
    CODEC_NAMES,
    GZIP,
    LZ4,
    MAX_DECOMPRESSED_BYTES,
    NONE,
    SNAPPY,
    ZSTD,
    Record,
    batch_keyed_records,
    build_batch,
    build_keyed_batch,
    compress,
    decode_batches,
    decompress,
    encode_batch,
)
from kafka_shim.protocol.records import CRC_POSITION, HEADER_SIZE, CorruptRecords, RecordBatches, read_header

ALL_CODECS = (NONE, GZIP, SNAPPY, LZ4, ZSTD)


def client_batch(compression: int = NONE, *, base_offset: int = 0) -> bytes:
    builder = DefaultRecordBatchBuilder(
        magic=2,
        compression_type=compression,
        is_transactional=False,
        producer_id=42,
        producer_epoch=3,
        base_sequence=7,
        batch_size=1 << 20,
    )
    builder.append(0, timestamp=1_000, key=b"k0", value=b"v0", headers=[("h", b"x"), ("n", None)])
    builder.append(1, timestamp=999, key=None, value=b"v1" * 100, headers=[])
    builder.append(2, timestamp=1_005, key=b"k2", value=None, headers=[])
    data = bytearray(builder.build())
    struct.pack_into(">q", data, 0, base_offset)  # outside the CRC, as a broker assigns it
    return bytes(data)


def client_view(data: bytes) -> list[tuple[int, int, bytes | None, bytes | None, list]]:
    out = []
    records = MemoryRecords(data)
    while (batch := records.next_batch()) is not None:
        assert isinstance(batch, DefaultRecordBatch) and batch.validate_crc()
        out += [(r.offset, r.timestamp, r.key, r.value, list(r.headers)) for r in batch]
    return out


@pytest.mark.parametrize("compression", [NONE, GZIP])
def test_decodes_the_client_builders_batches(compression: int) -> None:
    data = client_batch(compression, base_offset=100)
    (batch,) = decode_batches(data)
    assert batch.header.compression == compression
    assert batch.records == [
        Record(100, 1_000, b"k0", b"v0", (("h", b"x"), ("n", None))),
        Record(101, 999, None, b"v1" * 100),
        Record(102, 1_005, b"k2", None),
    ]
    assert batch.records[2].is_tombstone


@pytest.mark.parametrize("compression", [NONE, GZIP])
def test_reencoding_a_client_batch_gives_back_its_bytes(compression: int) -> None:
    data = client_batch(compression)
    (batch,) = decode_batches(data)
    h = batch.header
    rebuilt = encode_batch(
        batch.records,
        attributes=h.attributes,
        producer_id=h.producer_id,
        producer_epoch=h.producer_epoch,
        base_sequence=h.base_sequence,
        partition_leader_epoch=h.partition_leader_epoch,
    )
    if compression == NONE:
        assert rebuilt == data
    assert client_view(rebuilt) == client_view(data)


@pytest.mark.parametrize("codec", ALL_CODECS, ids=CODEC_NAMES.get)
def test_encoded_batches_validate_and_round_trip(codec: int) -> None:
    records = [Record(10 + i, 5_000 + i, f"k{i}".encode(), b"x" * i * 50) for i in range(200)]
    data = encode_batch(records, attributes=codec, producer_id=9, producer_epoch=1, base_sequence=0)
    parsed = RecordBatches.parse(data)  # the broker's own framing and CRC-32C check
    header = parsed.first
    assert (header.base_offset, header.last_offset, header.records_count) == (10, 209, 200)
    assert (header.base_timestamp, header.max_timestamp) == (5_000, 5_199)
    assert header.last_sequence == 199
    assert next(decode_batches(data)).records == records
    if codec in (NONE, GZIP):  # the codecs kafka-python can read without optional libraries
        assert [(o, k, v) for o, _, k, v, _ in client_view(data)] == [
            (r.offset, r.key, r.value) for r in records
        ]


def test_an_empty_batch_keeps_its_identity() -> None:
    data = encode_batch(
        [], base_offset=50, last_offset_delta=4, max_timestamp=77, producer_id=5, base_sequence=3
    )
    header = read_header(data)
    assert (header.base_offset, header.last_offset, header.records_count) == (50, 54, 0)
    assert (header.producer_id, header.last_sequence, header.max_timestamp) == (5, 7, 77)
    assert RecordBatches.parse(data).first.crc == header.crc
    assert client_view(data) == []


@pytest.mark.parametrize(
    ("keys_values", "identity"),
    [
        pytest.param([(b"k", b"v")], {}, id="one-commit"),
        pytest.param([(b"k", None)], {}, id="tombstone"),
        pytest.param([(None, b"v" * 200)], {}, id="no-key-two-byte-length"),
        pytest.param([(b"k%d" % i, b"v" * i) for i in range(70)], {}, id="offset-deltas-past-one-byte"),
        pytest.param(
            [(b"k", b"v"), (b"k", None)],
            {"attributes": 0x10, "producer_id": 7, "producer_epoch": 2, "base_sequence": 5},
            id="transactional",
        ),
        pytest.param(  # control_records.build_marker_batch: a COMMIT marker
            [(b"\x00\x00\x00\x01", b"\x00\x00\x00\x00\x00\x03")],
            {"attributes": 0x30, "producer_id": 7, "producer_epoch": 2, "base_sequence": -1},
            id="control-marker",
        ),
    ],
)
def test_keyed_batches_are_the_general_builders_bytes(
    keys_values: list[tuple[bytes | None, bytes | None]], identity: dict[str, int]
) -> None:
    """The one-pass builder (the internal topics' records, markers) writes what build_batch writes
    for the same records."""
    records = [Record(900 + i, 1_700_000_000_123, k, v) for i, (k, v) in enumerate(keys_values)]
    general = build_batch(records, partition_leader_epoch=0, **identity)
    keyed = build_keyed_batch(keys_values, 900, 1_700_000_000_123, partition_leader_epoch=0, **identity)
    assert keyed == general
    assert RecordBatches.parse(keyed.data).headers == keyed.headers


def test_keyed_batches_are_uncompressed() -> None:
    with pytest.raises(ValueError):
        build_keyed_batch([(b"k", b"v")], 0, 0, attributes=GZIP)


@pytest.mark.parametrize("codec", (SNAPPY, LZ4, ZSTD), ids=CODEC_NAMES.get)
def test_compressed_payloads_cross_block_boundaries(codec: int) -> None:
    payload = bytes(range(256)) * 1000  # 256 KB: several xerial chunks and LZ4 blocks
    assert decompress(codec, compress(codec, payload)) == payload


def test_snappy_decodes_raw_blocks_and_xerial_frames() -> None:
    payload = b"kafka " * 20_000
    raw = bytes(cramjam.snappy.compress_raw(payload))
    assert decompress(SNAPPY, raw) == payload
    xerial = compress(SNAPPY, payload)
    assert xerial.startswith(b"\x82SNAPPY\x00")
    assert decompress(SNAPPY, xerial) == payload


def test_lz4_frames_use_independent_blocks_like_the_java_client() -> None:
    frame = compress(LZ4, b"abc" * 100)
    flags = frame[4]
    assert flags & 0x20 and not flags & 0x04  # block independence, no content checksum


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda d: d[: HEADER_SIZE + 3], "overruns the batch"),
        (lambda d: d[:HEADER_SIZE] + b"\xff" * 12, "varint"),
        (lambda d: d[:HEADER_SIZE] + b"\x7f" + d[HEADER_SIZE + 1 :], "overruns"),
    ],
)
def test_corrupt_records_are_refused(mutate, message: str) -> None:  # type: ignore[no-untyped-def]
    data = encode_batch([Record(0, 1, b"k", b"v")])
    broken = bytearray(mutate(data))
    struct.pack_into(">i", broken, 8, len(broken) - 12)  # keep the frame consistent
    with pytest.raises(CorruptRecords, match=message):
        list(decode_batches(bytes(broken)))


def test_a_record_count_beyond_the_bytes_is_refused() -> None:
    data = bytearray(encode_batch([Record(0, 1, b"k", b"v")]))
    struct.pack_into(">i", data, HEADER_SIZE - 4, 1000)
    with pytest.raises(CorruptRecords, match="cannot fit"):
        list(decode_batches(bytes(data)))


def test_a_batch_inflating_beyond_the_limit_is_refused() -> None:
    bomb = compress(ZSTD, bytes(MAX_DECOMPRESSED_BYTES + 1))
    with pytest.raises(CorruptRecords, match="inflates"):
        decompress(ZSTD, bomb)


@pytest.mark.parametrize(
    ("codec", "garbage"),
    [(GZIP, b"nope"), (LZ4, b"nope"), (ZSTD, b"nope"), (SNAPPY, b"\x82SNAPPY\x00" + bytes(8) + b"\x7f")],
)
def test_garbage_does_not_decompress(codec: int, garbage: bytes) -> None:
    with pytest.raises(CorruptRecords):
        decompress(codec, garbage)


def test_the_crc_covers_the_records() -> None:
    data = bytearray(encode_batch([Record(0, 1, b"k", b"v")]))
    data[-1] ^= 1
    with pytest.raises(CorruptRecords, match="CRC"):
        RecordBatches.parse(bytes(data))
    assert read_header(bytes(data)).crc == struct.unpack_from(">I", data, CRC_POSITION)[0]


_blobs = st.none() | st.binary(max_size=40)
_records = st.lists(
    st.tuples(
        st.integers(0, 1000),
        st.integers(-(2**40), 2**40),
        _blobs,
        _blobs,
        st.lists(st.tuples(st.text(max_size=5), _blobs), max_size=3),
    ),
    max_size=20,
)


@settings(max_examples=60, deadline=None)
@given(_records, st.sampled_from(ALL_CODECS), st.integers(0, 2**40))
def test_round_trip(raw: list, codec: int, base_offset: int) -> None:  # type: ignore[type-arg]
    records = []
    offset = base_offset
    for gap, timestamp, key, value, headers in raw:
        offset += gap
        records.append(Record(offset, timestamp, key, value, tuple(headers)))
        offset += 1
    data = encode_batch(records, base_offset=base_offset, attributes=codec)
    (batch,) = decode_batches(RecordBatches.parse(data).data)
    assert batch.records == records
    assert batch_keyed_records(data, batch.header) == [(r.offset, r.key, r.value) for r in batch.records]


# --- through a running broker, with librdkafka --------------------------------------------


@pytest.mark.clients
@pytest.mark.parametrize("codec", ALL_CODECS, ids=CODEC_NAMES.get)
def test_librdkafka_batches_decode_and_ours_consume(kafka_shim, codec: int) -> None:  # type: ignore[no-untyped-def]
    from confluent_kafka import Consumer, Producer

    topic = f"codec-{CODEC_NAMES[codec]}-{uuid.uuid4().hex[:6]}"
    producer = Producer(
        {"bootstrap.servers": kafka_shim.bootstrap, "compression.type": CODEC_NAMES[codec], "linger.ms": 50}
    )
    sent = [(f"key-{i}".encode(), f"value-{i}-".encode() * 20) for i in range(50)]
    for key, value in sent:
        producer.produce(topic, key=key, value=value, headers=[("seq", key)])
    assert producer.flush(10) == 0

    log = kafka_shim.broker.topics.partition(topic, 0)
    stored = log.read(0, 1 << 24)
    batches = list(decode_batches(stored))
    assert {b.header.compression for b in batches} == {codec}
    decoded = [r for b in batches for r in b.records]
    assert [(r.key, r.value, r.headers) for r in decoded] == [(k, v, (("seq", k),)) for k, v in sent]
    assert [r.offset for r in decoded] == list(range(50))

    # Our encoding of the same records, appended straight to the log, consumed by librdkafka.
    again = [Record(r.offset, r.timestamp, r.key, b"again:" + (r.value or b"")) for r in decoded]
    ours = encode_batch(again, attributes=codec)
    log.append(RecordBatches.parse(ours))
    consumer = Consumer(
        {"bootstrap.servers": kafka_shim.bootstrap, "group.id": topic, "auto.offset.reset": "earliest"}
    )
    consumer.subscribe([topic])
    received: list[tuple[bytes | None, bytes | None]] = []
    try:
        while len(received) < 100:
            message = consumer.poll(10)
            assert message is not None, f"only {len(received)} messages arrived"
            assert message.error() is None, message.error()
            received.append((message.key(), message.value()))
    finally:
        consumer.close()
    assert received == sent + [(k, b"again:" + v) for k, v in sent]
