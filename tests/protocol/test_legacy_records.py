"""Magic 0/1 message sets: up-conversion to record batch v2 (Kafka's LogValidator) and
down-conversion from it (Kafka's RecordsUtil.downConvert), checked against message sets
built and read by kafka-python 3.0.12's LegacyRecordBatchBuilder / MemoryRecords."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from kafka.record.legacy_records import LegacyRecordBatchBuilder
from kafka.record.memory_records import MemoryRecords

from kafka_shim.protocol.control_records import EndTxnMarker, build_marker_batch
from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.protocol.legacy_records import (
    RefusedRecords,
    UnsupportedCompression,
    downconvert,
    encode_message,
    is_legacy,
    read_messages,
    upconvert,
    xxh32,
)
from kafka_shim.protocol.record_codec import (
    GZIP,
    LZ4,
    NONE,
    SNAPPY,
    ZSTD,
    Record,
    build_batch,
    compress,
    decode_batches,
)
from kafka_shim.protocol.records import TIMESTAMP_TYPE_LOG_APPEND, RecordsError

Message = tuple[bytes | None, bytes | None, int]  # key, value, timestamp


def legacy_set(magic: int, messages: list[Message], codec: int = NONE) -> bytes:
    """A message set as kafka-python 3.0.12 produces it (only gzip is installed for it here)."""
    builder = LegacyRecordBatchBuilder(magic=magic, compression_type=codec, batch_size=1 << 20)
    for offset, (key, value, timestamp) in enumerate(messages):
        builder.append(offset, timestamp=timestamp, key=key, value=value)
    return bytes(builder.build())


def consumed(data: bytes) -> list[tuple[int, int | None, bytes | None, bytes | None]]:
    """(offset, timestamp, key, value) as kafka-python's consumer reads a message set."""
    out = []
    records = MemoryRecords(data)
    while records.has_next():
        batch = records.next_batch()
        if batch is None:
            break
        out += [(r.offset, r.timestamp, r.key, r.value) for r in batch]
    return out


def stored(batch: bytes) -> list[Record]:
    return [r for decoded in decode_batches(batch) for r in decoded.records]


MESSAGES: list[Message] = [
    (b"k0", b"v0", 1_000),
    (None, b"v1", 1_005),
    (b"k2", None, 999),
    (None, None, 1_001),
]


@pytest.mark.parametrize(
    ("magic", "codec", "target", "stored_codec", "timestamps"),
    [
        (0, NONE, None, NONE, [-1, -1, -1, -1]),  # magic 0 has no timestamps
        (0, GZIP, None, GZIP, [-1, -1, -1, -1]),
        (1, NONE, None, NONE, [1_000, 1_005, 999, 1_001]),
        (1, GZIP, None, GZIP, [1_000, 1_005, 999, 1_001]),
        (1, NONE, SNAPPY, SNAPPY, [1_000, 1_005, 999, 1_001]),  # the topic's compression.type
        (1, GZIP, NONE, NONE, [1_000, 1_005, 999, 1_001]),  # compression.type=uncompressed
        (0, GZIP, LZ4, LZ4, [-1, -1, -1, -1]),
        (1, NONE, ZSTD, ZSTD, [1_000, 1_005, 999, 1_001]),
    ],
)
def test_upconversion_keeps_keys_values_and_timestamps_and_numbers_from_zero(
    magic: int, codec: int, target: int | None, stored_codec: int, timestamps: list[int]
) -> None:
    data = legacy_set(magic, MESSAGES, codec)
    assert is_legacy(data)
    converted = upconvert(data, target)
    (header,) = converted.headers
    assert header.magic == 2 and header.compression == stored_codec
    assert (header.base_offset, header.last_offset_delta, header.records_count) == (0, 3, 4)
    assert (header.producer_id, header.producer_epoch, header.base_sequence) == (-1, -1, -1)
    assert not header.is_log_append_time and not header.is_transactional
    assert header.max_timestamp == max(timestamps)
    records = stored(converted.data)
    assert [(r.offset, r.timestamp, r.key, r.value, r.headers) for r in records] == [
        (i, t, k, v, ()) for i, ((k, v, _), t) in enumerate(zip(MESSAGES, timestamps, strict=True))
    ]


def test_magic_1_compressed_wrapper_with_log_append_time_gives_its_time_to_every_record() -> None:
    batch = build_batch([Record(5, 10, b"k", b"a"), Record(6, 20, None, b"b")], attributes=GZIP)
    stamped = batch.with_log_append_time(77).data
    legacy = downconvert(stamped, 1, 0)
    (wrapper,) = read_messages(legacy)
    assert wrapper.is_log_append_time and wrapper.timestamp == 77 and wrapper.offset == 6
    assert [(r.timestamp, r.value) for r in stored(upconvert(legacy, None).data)] == [(77, b"a"), (77, b"b")]


@pytest.mark.parametrize("codec", [NONE, GZIP, SNAPPY, LZ4])
@pytest.mark.parametrize("magic", [0, 1])
def test_every_codec_round_trips_through_both_magics(magic: int, codec: int) -> None:
    records = [Record(40 + i, 2_000 + i, k, v) for i, (k, v, _) in enumerate(MESSAGES)]
    legacy = downconvert(build_batch(records, attributes=codec).data, magic, 40)
    if codec in (NONE, GZIP):  # the codecs kafka-python has libraries for here
        expected = [(r.offset, None if magic == 0 else r.timestamp, r.key, r.value) for r in records]
        assert consumed(legacy) == expected
    back = upconvert(legacy, None)
    assert back.first.compression == codec
    timestamps = [-1] * 4 if magic == 0 else [r.timestamp for r in records]
    assert [(r.timestamp, r.key, r.value) for r in stored(back.data)] == [
        (t, r.key, r.value) for t, r in zip(timestamps, records, strict=True)
    ]


def test_uncompressed_downconversion_is_kafka_python_s_own_message_set() -> None:
    """Byte for byte what kafka-python's builder writes for the same messages."""
    for magic in (0, 1):
        batch = build_batch([Record(i, t, k, v) for i, (k, v, t) in enumerate(MESSAGES)])
        assert downconvert(batch.data, magic, 0) == legacy_set(magic, MESSAGES)


def test_lz4_under_magic_0_uses_kafka_0_8_s_header_checksum_both_ways() -> None:
    legacy = downconvert(build_batch([Record(0, 1, None, b"x" * 100)], attributes=LZ4).data, 0, 0)
    (wrapper,) = read_messages(legacy)
    frame = wrapper.value
    assert frame is not None
    descriptor_end = 6  # magic number, FLG, BD: no content size
    assert frame[descriptor_end] == (xxh32(frame[:descriptor_end]) >> 8) & 0xFF  # over the magic number too
    assert frame[descriptor_end] != (xxh32(frame[4:descriptor_end]) >> 8) & 0xFF
    assert [r.value for r in stored(upconvert(legacy, None).data)] == [b"x" * 100]


def test_xxh32_matches_the_reference_vectors() -> None:
    assert [xxh32(b""), xxh32(b"a"), xxh32(b"abc")] == [0x02CC5D05, 0x550D7456, 0x32D153FF]
    assert xxh32(b"Nobody inspects the spammish repetition") == 0xE2293B2F


def test_downconversion_skips_control_batches_drops_headers_and_keeps_transactional_records() -> None:
    data = build_batch(
        [Record(0, 1, b"k", b"in-txn", (("h", b"v"),))],
        attributes=0x10,  # transactional
        producer_id=7,
        producer_epoch=0,
        base_sequence=0,
    ).data
    data += build_marker_batch(
        EndTxnMarker(False, 0),
        offset=1,
        producer_id=7,
        producer_epoch=0,
        timestamp_ms=2,
        partition_leader_epoch=0,
    ).data
    data += build_batch([Record(2, 3, None, b"after")]).data
    assert consumed(downconvert(data, 1, 0)) == [(0, 1, b"k", b"in-txn"), (2, 3, None, b"after")]


def test_records_below_the_fetch_offset_leave_an_uncompressed_batch_not_a_compressed_one() -> None:
    records = [Record(10 + i, 5, None, bytes([i])) for i in range(3)]
    plain = downconvert(build_batch(records).data, 1, 11)
    assert [offset for offset, *_ in consumed(plain)] == [11, 12]
    compressed = downconvert(build_batch(records, attributes=GZIP).data, 1, 11)
    (wrapper,) = read_messages(compressed)
    assert wrapper.offset == 12  # the wrapper, and all three records inside it, are served
    assert [offset for offset, *_ in consumed(compressed)] == [10, 11, 12]


def test_log_append_time_batches_downconvert_to_magic_1_log_append_time() -> None:
    stamped = build_batch([Record(0, 5, None, b"a")]).with_log_append_time(99).data
    (message,) = read_messages(downconvert(stamped, 1, 0))
    assert message.attributes & TIMESTAMP_TYPE_LOG_APPEND and message.timestamp == 99
    (message,) = read_messages(downconvert(stamped, 0, 0))
    assert message.attributes == 0 and message.timestamp == -1


def test_zstd_cannot_be_downconverted() -> None:
    zstd = build_batch([Record(1, 1, None, b"z")], attributes=ZSTD).data
    plain = build_batch([Record(0, 1, None, b"p")]).data
    with pytest.raises(UnsupportedCompression) as refused:
        downconvert(zstd + plain, 1, 0)
    assert refused.value.code == ErrorCode.UNSUPPORTED_COMPRESSION_TYPE
    assert consumed(downconvert(plain + zstd, 1, 0)) == [(0, 1, None, b"p")]  # served up to it


def _inner_compressed() -> bytes:
    """A gzip wrapper whose inner message set holds a compressed message (kafka-python's
    gzip wrapper): Kafka refuses it, no client writes it."""
    return encode_message(0, 1, GZIP, 1, None, compress(GZIP, legacy_set(1, [(None, b"a", 1)], GZIP)))


@pytest.mark.parametrize(
    ("data", "code", "message"),
    [
        (legacy_set(1, [(None, b"a", 1)])[:-1], ErrorCode.CORRUPT_MESSAGE, "overruns"),
        (
            legacy_set(1, [(None, b"a", 1)])[:20] + b"\xff" + legacy_set(1, [(None, b"a", 1)])[21:],
            ErrorCode.CORRUPT_MESSAGE,
            "Record is corrupt",
        ),
        (
            legacy_set(0, [(None, b"a", -1)]) + legacy_set(1, [(None, b"b", 1)]),
            ErrorCode.INVALID_RECORD,
            "magic",
        ),
        (
            legacy_set(1, [(None, b"a", 1)], GZIP) + legacy_set(1, [(None, b"b", 1)], GZIP),
            ErrorCode.INVALID_RECORD,
            "Compressed outer record has more than one batch",
        ),
    ],
    # Named, not shown: a gzip member's header carries the time it was written.
    ids=["truncated", "bit-flipped", "magic-0-then-1", "two-gzip-wrappers"],
)
def test_malformed_message_sets_are_refused_with_kafka_s_codes(data: bytes, code: int, message: str) -> None:
    with pytest.raises(RecordsError) as refused:
        upconvert(data, None)
    assert refused.value.code == code and message in str(refused.value)


def test_a_compressed_inner_message_and_keyless_records_of_a_compacted_topic_are_record_errors() -> None:
    with pytest.raises(RefusedRecords) as refused:
        upconvert(_inner_compressed(), None)
    assert [e.batch_index for e in refused.value.errors] == [0]
    assert "should not have an inner record with a compression attribute" in refused.value.errors[0].message
    with pytest.raises(RefusedRecords) as keyless:
        upconvert(legacy_set(1, MESSAGES), None, require_keys="t-0")
    assert [(e.batch_index, e.message) for e in keyless.value.errors] == [
        (i, "Compacted topic cannot accept message without key in topic partition t-0") for i in (1, 3)
    ]


@settings(max_examples=300, deadline=None)
@given(st.binary(min_size=17, max_size=300), st.integers(0, 1), st.data())
def test_untrusted_message_sets_fail_only_as_records_errors(
    data: bytes, magic: int, pick: st.DataObject
) -> None:
    """Garbage (or a real set with one byte flipped) that looks like magic 0/1 is refused
    with a Kafka error code, never another exception."""
    real = legacy_set(magic, MESSAGES, pick.draw(st.sampled_from([NONE, GZIP])))
    flip = pick.draw(st.integers(0, len(real) - 1))
    for candidate in (
        data[:16] + bytes([magic]) + data[17:],
        real[:flip] + bytes([real[flip] ^ 0xFF]) + real[flip + 1 :],
    ):
        try:
            upconvert(candidate, None)
        except RecordsError as refused:
            assert refused.code in (ErrorCode.CORRUPT_MESSAGE, ErrorCode.INVALID_RECORD)
