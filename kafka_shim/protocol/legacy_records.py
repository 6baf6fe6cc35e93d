"""Message sets of magic 0 and 1 (Kafka's LegacyRecord): what pre-0.11 clients send
and read. The broker stores only record batch v2, so Produce up-converts these, as
Kafka's LogValidator does, and Fetch v0-3 down-converts stored batches to them, as
Kafka's RecordsUtil.downConvert does.

Message layout (big-endian):

    offset int64 | size int32 | crc uint32 | magic int8 | attributes int8
    | timestamp int64 (magic 1 only) | keyLength int32, key | valueLength int32, value

`size` counts the bytes after itself; the CRC (CRC-32, as zlib computes it) covers
magic to the end. Attributes: bits 0-2 the codec, bit 3 (magic 1) LogAppendTime. A
compressed message (a "wrapper") holds, compressed in its value, a message set of
uncompressed inner messages; magic 1 numbers them relative to the first (the wrapper
carries the absolute offset of the last), magic 0 absolutely.

LZ4 under magic 0 is Kafka 0.8's frame with a wrong header checksum (computed over
the frame's magic number too): read without trusting it, written with it.
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Sequence
from typing import Final, NamedTuple

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.protocol.record_codec import (
    LZ4,
    NONE,
    ZSTD,
    Record,
    build_batch,
    compress,
    decode_batch,
    decompress,
)
from kafka_shim.protocol.records import (
    COMPRESSION_MASK,
    LOG_OVERHEAD,
    MAGIC_POSITION,
    TIMESTAMP_TYPE_LOG_APPEND,
    CorruptRecords,
    RecordBatches,
    RecordsError,
    iter_headers,
)

MAGIC_V0: Final = 0
MAGIC_V1: Final = 1
NO_TIMESTAMP: Final = -1

_OFFSET_AND_SIZE = struct.Struct(">qi")
_CRC_MAGIC_ATTRIBUTES = struct.Struct(">Ibb")
_TIMESTAMP = struct.Struct(">q")
_LENGTH = struct.Struct(">i")
# crc + magic + attributes + key length + value length, and magic 1's timestamp.
_MIN_SIZE = {MAGIC_V0: 14, MAGIC_V1: 22}
_CRC_END = LOG_OVERHEAD + 4  # the CRC covers everything after it


class InvalidRecord(RecordsError):
    """A well-framed message set Kafka's LogValidator refuses (INVALID_RECORD)."""

    code = ErrorCode.INVALID_RECORD


class UnsupportedCompression(RecordsError):
    """zstd cannot be written as magic 0/1 (Kafka: down-conversion of zstd is refused)."""

    code = ErrorCode.UNSUPPORTED_COMPRESSION_TYPE


class LegacyMessage(NamedTuple):
    offset: int
    magic: int
    attributes: int
    timestamp: int  # NO_TIMESTAMP under magic 0
    key: bytes | None
    value: bytes | None

    @property
    def codec(self) -> int:
        return self.attributes & COMPRESSION_MASK

    @property
    def is_log_append_time(self) -> bool:
        return self.magic > MAGIC_V0 and bool(self.attributes & TIMESTAMP_TYPE_LOG_APPEND)


def is_legacy(data: bytes) -> bool:
    """Whether a records blob is a magic 0/1 message set (magic sits where v2's does)."""
    return len(data) > MAGIC_POSITION and data[MAGIC_POSITION] < 2


# --- reading -------------------------------------------------------------------------


def message_sizes(data: bytes) -> list[int]:
    """The size of each (shallow) message as Kafka measures it against max.message.bytes
    (with its offset and size fields), by the framing alone."""
    sizes = []
    pos = 0
    while pos + LOG_OVERHEAD <= len(data):
        _, size = _OFFSET_AND_SIZE.unpack_from(data, pos)
        sizes.append(LOG_OVERHEAD + size)
        pos += LOG_OVERHEAD + max(size, 0)
    return sizes


def _read_bytes(data: bytes, pos: int, end: int) -> tuple[bytes | None, int]:
    if pos + 4 > end:
        raise CorruptRecords("message ends inside a length")
    (length,) = _LENGTH.unpack_from(data, pos)
    pos += 4
    if length < 0:
        return None, pos
    if pos + length > end:
        raise CorruptRecords(f"field of {length} bytes overruns its message")
    return data[pos : pos + length], pos + length


def read_messages(data: bytes) -> list[LegacyMessage]:
    """The (shallow) messages of a message set, CRCs verified; CorruptRecords on a
    partial or damaged message, InvalidRecord if magic changes along the set."""
    messages: list[LegacyMessage] = []
    pos = 0
    while pos < len(data):
        if len(data) - pos < LOG_OVERHEAD + _CRC_MAGIC_ATTRIBUTES.size:
            raise CorruptRecords(f"{len(data) - pos} bytes at {pos} are shorter than a message header")
        offset, size = _OFFSET_AND_SIZE.unpack_from(data, pos)
        crc, magic, attributes = _CRC_MAGIC_ATTRIBUTES.unpack_from(data, pos + LOG_OVERHEAD)
        end = pos + LOG_OVERHEAD + size
        if magic not in _MIN_SIZE:
            raise InvalidRecord(f"magic {magic} at {pos} in a magic 0/1 message set")
        if size < _MIN_SIZE[magic] or end > len(data):
            raise CorruptRecords(
                f"message of size {size} at {pos} is shorter than its header or overruns the set"
            )
        computed = zlib.crc32(memoryview(data)[pos + _CRC_END : end])
        if computed != crc:
            raise CorruptRecords(f"Record is corrupt (stored crc = {crc}, computed crc = {computed})")
        if messages and messages[0].magic != magic:
            raise InvalidRecord(
                f"Batch magic {magic} is not the same as the first batch's magic byte {messages[0].magic}"
            )
        field = pos + _CRC_END + 2
        timestamp = NO_TIMESTAMP
        if magic == MAGIC_V1:
            (timestamp,) = _TIMESTAMP.unpack_from(data, field)
            field += _TIMESTAMP.size
        key, field = _read_bytes(data, field, end)
        value, field = _read_bytes(data, field, end)
        if field != end:
            raise CorruptRecords(
                f"message at {pos} declares {size} bytes but holds {field - pos - LOG_OVERHEAD}"
            )
        messages.append(LegacyMessage(offset, magic, attributes, timestamp, key, value))
        pos = end
    return messages


def _inner_messages(wrapper: LegacyMessage) -> list[LegacyMessage]:
    payload = wrapper.value or b""
    if wrapper.codec == LZ4 and wrapper.magic == MAGIC_V0:
        payload = _lz4_with_header_checksum(payload, broken=False)
    inner = read_messages(decompress(wrapper.codec, payload))
    if wrapper.is_log_append_time:  # the wrapper's time stands for every inner message's
        inner = [m._replace(timestamp=wrapper.timestamp) for m in inner]
    return inner


KEYLESS_IN_COMPACTED_TOPIC: Final = "Compacted topic cannot accept message without key in topic partition {}"


class RecordError(NamedTuple):
    batch_index: int
    message: str


class RefusedRecords(InvalidRecord):
    """Records LogValidator refuses one by one: the whole set is not written."""

    def __init__(self, errors: Sequence[RecordError]) -> None:
        super().__init__(errors[0].message)
        self.errors = list(errors)


def upconvert(data: bytes, target_codec: int | None, *, require_keys: str | None = None) -> RecordBatches:
    """A magic 0/1 message set as the one record batch v2 Kafka 3.x stores for it:
    records numbered from 0, their keys, values and timestamps (none under magic 0),
    compressed with `target_codec` (None: as the producer compressed them), no
    producer id. `require_keys` names the partition of a compacted topic, where a
    record without a key is refused."""
    shallow = read_messages(data)
    if not shallow:
        raise InvalidRecord("Record batch has no batches at all")
    source_codec = NONE
    for message in shallow:
        if message.codec != NONE:
            source_codec = message.codec
    if source_codec != NONE and len(shallow) > 1:
        raise InvalidRecord("Compressed outer record has more than one batch")
    records: list[Record] = []
    errors: list[RecordError] = []
    messages = shallow if source_codec == NONE else _inner_messages(shallow[0])
    for index, message in enumerate(messages):
        if message.magic != shallow[0].magic:
            errors.append(
                RecordError(
                    index, f"Record's magic {message.magic} does not match outer magic {shallow[0].magic}"
                )
            )
        elif source_codec != NONE and message.codec != NONE:
            errors.append(
                RecordError(
                    index,
                    "Compressed outer record should not have an inner record with a compression attribute"
                    " set",
                )
            )
        elif require_keys is not None and message.key is None:
            errors.append(RecordError(index, KEYLESS_IN_COMPACTED_TOPIC.format(require_keys)))
        else:
            records.append(Record(len(records), message.timestamp, message.key, message.value))
    if errors:
        raise RefusedRecords(errors)
    codec = source_codec if target_codec is None else target_codec
    return build_batch(records, base_offset=0, attributes=codec)


# --- writing -------------------------------------------------------------------------


def encode_message(
    offset: int, magic: int, attributes: int, timestamp: int, key: bytes | None, value: bytes | None
) -> bytes:
    body = bytearray(_CRC_MAGIC_ATTRIBUTES.pack(0, magic, attributes))
    if magic == MAGIC_V1:
        body += _TIMESTAMP.pack(timestamp)
    for field in (key, value):
        body += _LENGTH.pack(-1 if field is None else len(field))
        body += field or b""
    struct.pack_into(">I", body, 0, zlib.crc32(memoryview(body)[4:]))
    return _OFFSET_AND_SIZE.pack(offset, len(body)) + bytes(body)


def downconvert(data: bytes, magic: int, fetch_offset: int) -> bytes:
    """Stored v2 batches as a magic 0/1 message set, as Kafka serves Fetch v0-3:
    control batches skipped, headers dropped, magic 0 without timestamps, a compressed
    batch as one wrapper of the same codec, records of an uncompressed batch below
    `fetch_offset` left out. zstd cannot be expressed: UnsupportedCompression if the
    first batch to serve is zstd, else the set ends before it."""
    out = bytearray()
    for header in iter_headers(data):
        if header.is_control:
            continue
        if header.compression == ZSTD:
            if not out:
                raise UnsupportedCompression(
                    "Down-conversion of zstandard-compressed batches is not supported"
                )
            break
        records = decode_batch(data, header).records
        time_type = TIMESTAMP_TYPE_LOG_APPEND if header.is_log_append_time and magic == MAGIC_V1 else 0
        if header.compression == NONE:
            for r in records:
                if r.offset >= fetch_offset:
                    out += encode_message(r.offset, magic, time_type, r.timestamp, r.key, r.value)
            continue
        if not records:
            continue
        base = records[0].offset if magic == MAGIC_V1 else 0  # magic 1: inner offsets are relative
        inner = b"".join(
            encode_message(r.offset - base, magic, time_type, r.timestamp, r.key, r.value) for r in records
        )
        payload = compress(header.compression, inner)
        if header.compression == LZ4 and magic == MAGIC_V0:
            payload = _lz4_with_header_checksum(payload, broken=True)
        wrapper_time = header.max_timestamp if time_type else max(r.timestamp for r in records)
        out += encode_message(
            records[-1].offset, magic, header.compression | time_type, wrapper_time, None, payload
        )
    return bytes(out)


# --- LZ4 frame header checksum --------------------------------------------------------

_LZ4_FRAME_MAGIC: Final = b"\x04\x22\x4d\x18"
_LZ4_CONTENT_SIZE_FLAG: Final = 0x08
_LZ4_DICT_ID_FLAG: Final = 0x01


def _lz4_with_header_checksum(frame: bytes, *, broken: bool) -> bytes:
    """The LZ4 frame with its header checksum byte recomputed: over the frame descriptor
    (the standard), or with `broken` over magic number and descriptor (Kafka 0.8)."""
    if len(frame) < 7 or not frame.startswith(_LZ4_FRAME_MAGIC):
        raise CorruptRecords("not an LZ4 frame")
    flags = frame[4]
    checksum_at = 6 + (8 if flags & _LZ4_CONTENT_SIZE_FLAG else 0) + (4 if flags & _LZ4_DICT_ID_FLAG else 0)
    if len(frame) <= checksum_at:
        raise CorruptRecords("LZ4 frame header is cut short")
    covered = frame[0 if broken else 4 : checksum_at]
    return frame[:checksum_at] + bytes([(xxh32(covered) >> 8) & 0xFF]) + frame[checksum_at + 1 :]


_P1, _P2, _P3, _P4, _P5 = 2654435761, 2246822519, 3266489917, 668265263, 374761393
_U32: Final = 0xFFFFFFFF


def _rotl(value: int, bits: int) -> int:
    return ((value << bits) | (value >> (32 - bits))) & _U32


def xxh32(data: bytes, seed: int = 0) -> int:
    """XXH32 of `data`: the LZ4 frame format's header checksum (a few bytes, so pure Python)."""
    pos, size = 0, len(data)
    if size >= 16:
        lanes = [(seed + _P1 + _P2) & _U32, (seed + _P2) & _U32, seed & _U32, (seed - _P1) & _U32]
        while pos + 16 <= size:
            for i in range(4):
                (word,) = struct.unpack_from("<I", data, pos + 4 * i)
                lanes[i] = (_rotl((lanes[i] + word * _P2) & _U32, 13) * _P1) & _U32
            pos += 16
        acc = (_rotl(lanes[0], 1) + _rotl(lanes[1], 7) + _rotl(lanes[2], 12) + _rotl(lanes[3], 18)) & _U32
    else:
        acc = (seed + _P5) & _U32
    acc = (acc + size) & _U32
    while pos + 4 <= size:
        (word,) = struct.unpack_from("<I", data, pos)
        acc = (_rotl((acc + word * _P3) & _U32, 17) * _P4) & _U32
        pos += 4
    for byte in data[pos:]:
        acc = (_rotl((acc + byte * _P5) & _U32, 11) * _P1) & _U32
    acc = ((acc ^ (acc >> 15)) * _P2) & _U32
    acc = ((acc ^ (acc >> 13)) * _P3) & _U32
    return acc ^ (acc >> 16)
