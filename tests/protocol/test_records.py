"""Record batch v2 framing, against batches built by kafka-python 3.0.12's
DefaultRecordBatchBuilder and read back by its MemoryRecords."""

from __future__ import annotations

import struct

import pytest

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.protocol.records import (
    CRC_POSITION,
    HEADER_SIZE,
    MAGIC_POSITION,
    CorruptRecords,
    RecordBatches,
    RecordsError,
    UnsupportedMagic,
    read_header,
)
from tests.batches import make_batch, read_records


def test_header_fields_match_the_client_builder() -> None:
    data = make_batch(
        [b"a", b"b", b"c"], base_timestamp=5_000, producer_id=7, producer_epoch=2, base_sequence=10
    )
    header = read_header(data)
    assert HEADER_SIZE == 61
    assert header.magic == 2
    assert header.size == len(data)
    assert (header.base_offset, header.last_offset_delta, header.records_count) == (0, 2, 3)
    assert (header.base_timestamp, header.max_timestamp) == (5_000, 5_002)
    assert (header.producer_id, header.producer_epoch, header.base_sequence) == (7, 2, 10)
    assert header.last_sequence == 12
    assert header.has_producer_id and not header.is_transactional and not header.is_control


def test_last_sequence_wraps_at_int32() -> None:
    data = make_batch([b"a", b"b", b"c"], producer_id=1, producer_epoch=0, base_sequence=2**31 - 2)
    assert read_header(data).last_sequence == 0


def test_crc_validates_and_detects_corruption() -> None:
    data = make_batch([b"hello", b"world"])
    RecordBatches.parse(data)
    flipped = bytearray(data)
    flipped[-1] ^= 0xFF
    with pytest.raises(CorruptRecords) as info:
        RecordBatches.parse(bytes(flipped))
    assert info.value.code == ErrorCode.CORRUPT_MESSAGE
    RecordBatches.parse(bytes(flipped), verify_crc=False)  # framing alone is intact


def test_multi_batch_blob() -> None:
    one = make_batch([b"a", b"b"])
    two = make_batch([b"c" * 100, b"d" * 100, b"e" * 100], compression="gzip")
    batches = RecordBatches.parse(one + two)
    assert [h.position for h in batches.headers] == [0, len(one)]
    assert batches.offset_count == 5
    assert batches.last.compression == 1


def test_base_offset_rewrite_keeps_crc_and_records() -> None:
    blob = make_batch([b"a", b"b"]) + make_batch([b"c", b"d", b"e"], base_timestamp=9_000)
    moved = RecordBatches.parse(blob).with_base_offset(100, partition_leader_epoch=7)
    assert [h.base_offset for h in moved.headers] == [100, 102]
    assert [h.partition_leader_epoch for h in moved.headers] == [7, 7]
    assert moved.last.last_offset == 104
    reparsed = RecordBatches.parse(moved.data)  # CRC still valid: baseOffset is outside it
    assert reparsed.headers == moved.headers
    assert [(o, v) for o, _, v in read_records(moved.data)] == [
        (100, b"a"),
        (101, b"b"),
        (102, b"c"),
        (103, b"d"),
        (104, b"e"),
    ]


@pytest.mark.parametrize("epoch", [7, None])
def test_single_batch_rewrite_header_is_what_parsing_reads(epoch: int | None) -> None:
    """One batch (what producers send) takes its header from the parsed one with the offset
    and epoch replaced, not by reading the new bytes: the two must agree field by field."""
    parsed = RecordBatches.parse(make_batch([b"a", b"b", b"c"], base_timestamp=9_000))
    moved = parsed.with_base_offset(100, partition_leader_epoch=epoch)
    assert moved.headers == RecordBatches.parse(moved.data).headers
    assert (moved.first.base_offset, moved.last.last_offset) == (100, 102)
    kept = parsed.first.partition_leader_epoch
    assert moved.first.partition_leader_epoch == (kept if epoch is None else epoch)


def test_single_batch_already_placed_is_kept() -> None:
    """A producer's batch whose offset and epoch already are where the log places it (its
    base offset 0 at an empty log, say) needs no rewrite: the same bytes either way."""
    parsed = RecordBatches.parse(make_batch([b"a"]))
    epoch = parsed.first.partition_leader_epoch
    assert parsed.with_base_offset(parsed.first.base_offset, epoch) is parsed
    assert parsed.with_base_offset(parsed.first.base_offset, epoch + 1).data != parsed.data


def test_log_append_time_restamps_and_recomputes_crc() -> None:
    compressed = make_batch([b"a" * 100] * 2, compression="gzip")
    stamped = RecordBatches.parse(compressed).with_log_append_time(77_000)
    header = RecordBatches.parse(stamped.data).first
    assert header.is_log_append_time and header.max_timestamp == 77_000
    assert [t for _, t, _ in read_records(stamped.data)] == [77_000, 77_000]


@pytest.mark.parametrize("magic", [0, 1])
def test_old_message_formats_are_unsupported(magic: int) -> None:
    data = bytearray(make_batch([b"a"]))
    data[MAGIC_POSITION] = magic
    with pytest.raises(UnsupportedMagic) as info:
        RecordBatches.parse(bytes(data))
    assert info.value.code == ErrorCode.UNSUPPORTED_FOR_MESSAGE_FORMAT


def test_short_v0_message_set_is_unsupported_not_corrupt() -> None:
    # A v0 message with a tiny payload is shorter than a v2 header.
    message_set = struct.pack(">qiIbb", 0, 14, 0, 0, 0) + b"\xff\xff\xff\xff" + b"\x00\x00\x00\x00"
    with pytest.raises(UnsupportedMagic):
        RecordBatches.parse(message_set)


@pytest.mark.parametrize(
    "blob",
    [
        b"",
        b"\x00" * 10,
        make_batch([b"a"])[:-1],  # truncated batch
        make_batch([b"a"]) + make_batch([b"b"])[:40],  # trailing partial batch
    ],
    ids=["empty", "short", "truncated", "partial-trailer"],
)
def test_bad_framing_is_corrupt(blob: bytes) -> None:
    with pytest.raises(CorruptRecords):
        RecordBatches.parse(blob)


@pytest.mark.parametrize("length", [-1, 0, 48, 2**31 - 1])
def test_batch_length_is_bounded(length: int) -> None:
    data = bytearray(make_batch([b"a"]))
    struct.pack_into(">i", data, 8, length)
    with pytest.raises(RecordsError):
        RecordBatches.parse(bytes(data))


def test_negative_offset_delta_is_corrupt_even_with_matching_crc() -> None:
    data = bytearray(make_batch([b"a"]))
    struct.pack_into(">i", data, 23, -5)
    with pytest.raises(CorruptRecords):
        RecordBatches.parse(bytes(data), verify_crc=False)


def test_crc_field_position() -> None:
    data = make_batch([b"a"])
    assert struct.unpack_from(">I", data, CRC_POSITION)[0] == read_header(data).crc
