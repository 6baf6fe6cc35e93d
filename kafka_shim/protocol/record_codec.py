"""The records inside v2 record batches: decode, encode, and the four codecs.

The produce and fetch paths never come here (batches stay bytes, see
`protocol.records`); this module is for the places that must look inside a
batch: the offsets log, compaction, tests.

Record layout (signed zig-zag varints unless noted):

    length varint | attributes int8 | timestampDelta varlong | offsetDelta varint
    | keyLength varint, key | valueLength varint, value
    | headerCount varint, (keyLength varint, key utf-8 | valueLength varint, value)*

A length of -1 is null. With compression, everything after `recordsCount`
is one compressed blob. Codecs (attributes & 0x07): 1 gzip, 2 snappy (the Java
client frames it the xerial way; librdkafka may send raw blocks: both decode),
3 lz4 (the LZ4 frame format, independent blocks), 4 zstd.

`Record` holds absolute offsets and timestamps, so records can move between
batches (compaction re-encodes them under the original base offset).
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Final, NamedTuple, ParamSpec

import cramjam

from kafka_shim.protocol.records import (
    ATTRIBUTES_POSITION,
    COMPRESSION_MASK,
    CRC_POSITION,
    HEADER,
    HEADER_SIZE,
    LOG_OVERHEAD,
    MAGIC,
    NO_PRODUCER_ID,
    NO_SEQUENCE,
    TIMESTAMP_TYPE_LOG_APPEND,
    BatchHeader,
    CorruptRecords,
    RecordBatches,
    batch_crc,
    crc32c,
    iter_headers,
)
from kafka_shim.protocol.tuples import new_tuple
from kafka_shim.protocol.types import (
    ProtocolError,
    encode_uvarint,
    read_uvarint_at,
    zigzag_decode,
    zigzag_encode,
)

NONE: Final = 0
GZIP: Final = 1
SNAPPY: Final = 2
LZ4: Final = 3
ZSTD: Final = 4
CODEC_NAMES: Final = {NONE: "none", GZIP: "gzip", SNAPPY: "snappy", LZ4: "lz4", ZSTD: "zstd"}
# The topic config compression.type -> the codec a rewritten batch gets (None: the producer's).
TARGET_CODECS: Final[dict[str, int | None]] = {
    "producer": None,
    "uncompressed": NONE,
    "gzip": GZIP,
    "snappy": SNAPPY,
    "lz4": LZ4,
    "zstd": ZSTD,
}

# KIP-534: the cleaner stores a batch's tombstone delete horizon in baseTimestamp and says so here.
DELETE_HORIZON_FLAG: Final = 0x40
NO_TIMESTAMP: Final = -1
NO_PARTITION_LEADER_EPOCH: Final = -1

# Where the CRC sits among HEADER's fields, and its own encoding.
_CRC_FIELD: Final = 4
_CRC = struct.Struct(">I")
# A batch header split at its CRC: the fields before the CRC (the CRC last), and those it covers.
_HEADER_HEAD = struct.Struct(">qiibI")  # baseOffset, batchLength, partitionLeaderEpoch, magic, crc
_HEADER_TAIL = struct.Struct(">hiqqqhii")  # attributes, lastOffsetDelta, ... recordCount
_ZEROS_1, _ZEROS_2 = bytes(1), bytes(2)

# A compressed batch may not inflate beyond this: stored batches come from clients.
MAX_DECOMPRESSED_BYTES: Final = 256 * 1024 * 1024

Header = tuple[str, bytes | None]


class Record(NamedTuple):
    """One record; a tuple because batches are built and decoded by the thousand
    (a frozen dataclass took 1.8 us to construct)."""

    offset: int
    timestamp: int
    key: bytes | None
    value: bytes | None
    headers: tuple[Header, ...] = ()
    attributes: int = 0  # unused by Kafka so far, kept as found

    @property
    def is_tombstone(self) -> bool:
        return self.value is None


@dataclass(frozen=True)
class DecodedBatch:
    header: BatchHeader
    records: list[Record]

    @property
    def delete_horizon_ms(self) -> int | None:
        h = self.header
        return h.base_timestamp if h.attributes & DELETE_HORIZON_FLAG else None


# --- varints --------------------------------------------------------------------------


def _read_varint(data: bytes, pos: int, max_bytes: int) -> tuple[int, int]:
    """A zig-zag varint at `pos`: (value, position after it)."""
    try:
        raw, pos = read_uvarint_at(data, pos, max_bytes)
    except IndexError:
        raise CorruptRecords("record ends inside a varint") from None
    except ProtocolError:
        raise CorruptRecords(f"varint longer than {max_bytes} bytes") from None
    return zigzag_decode(raw), pos


# Zig-zag values of the one-byte varints.
_ONE_BYTE_VARINTS: Final = tuple(zigzag_decode(byte) for byte in range(0x80))


# The varints of small non-negative values (lengths, deltas), looked up instead of encoded.
_SMALL_VARINTS: Final = tuple(encode_uvarint(zigzag_encode(value)) for value in range(0x400))


def _varint(value: int) -> bytes:
    if 0 <= value < 0x400:
        return _SMALL_VARINTS[value]
    return encode_uvarint(zigzag_encode(value))


def _write_varint(out: bytearray, value: int) -> None:
    out += _varint(value)


def _read_blob(data: bytes, pos: int, end: int) -> tuple[bytes | None, int]:
    length, pos = _read_varint(data, pos, 5)
    if length < 0:
        if length != -1:
            raise CorruptRecords(f"invalid length {length}")
        return None, pos
    if pos + length > end:
        raise CorruptRecords(f"field of {length} bytes overruns its record")
    return data[pos : pos + length], pos + length


_NULL: Final = encode_uvarint(zigzag_encode(-1))  # the length of a null key or value


def _write_blob(out: bytearray, blob: bytes | None) -> None:
    if blob is None:
        out += _NULL
    else:
        _write_varint(out, len(blob))
        out += blob


# --- records --------------------------------------------------------------------------


def decode_records(
    data: bytes, count: int, base_offset: int, base_timestamp: int, log_append_time: int | None = None
) -> list[Record]:
    """`count` records from uncompressed record bytes. With `log_append_time`
    (LogAppendTime batches) every record carries that timestamp, as Kafka reports it."""
    if count > len(data):  # every record takes at least one byte
        raise CorruptRecords(f"{count} records cannot fit in {len(data)} bytes")
    records = []
    pos = 0
    for _ in range(count):
        length, pos = _read_varint(data, pos, 5)
        end = pos + length
        if length < 0 or end > len(data):
            raise CorruptRecords(f"record of {length} bytes overruns the batch")
        attributes = data[pos]
        timestamp_delta, p = _read_varint(data, pos + 1, 10)
        offset_delta, p = _read_varint(data, p, 5)
        key, p = _read_blob(data, p, end)
        value, p = _read_blob(data, p, end)
        header_count, p = _read_varint(data, p, 5)
        if not 0 <= header_count <= end - p:
            raise CorruptRecords(f"invalid header count {header_count}")
        headers = []
        for _ in range(header_count):
            name, p = _read_blob(data, p, end)
            if name is None:
                raise CorruptRecords("null header key")
            header_value, p = _read_blob(data, p, end)
            try:
                headers.append((name.decode("utf-8"), header_value))
            except UnicodeDecodeError as exc:
                raise CorruptRecords("header key is not UTF-8") from exc
        if p != end:
            raise CorruptRecords(f"record declares {length} bytes but holds {p - pos}")
        timestamp = base_timestamp + timestamp_delta if log_append_time is None else log_append_time
        records.append(Record(base_offset + offset_delta, timestamp, key, value, tuple(headers), attributes))
        pos = end
    if pos != len(data):
        raise CorruptRecords(f"{len(data) - pos} bytes follow the last record")
    return records


def decode_keyed_records(
    data: bytes, count: int, base_offset: int
) -> list[tuple[int, bytes | None, bytes | None]]:
    """Only (offset, key, value) of `count` uncompressed records: the fast path for
    replaying and compacting a log by key. Varints there are mostly one byte long:
    those are read inline, the others by `_read_varint`."""
    if count > len(data):
        raise CorruptRecords(f"{count} records cannot fit in {len(data)} bytes")
    out = []
    pos = 0
    size = len(data)
    one_byte = _ONE_BYTE_VARINTS
    try:
        for _ in range(count):
            if (byte := data[pos]) < 0x80:
                length, pos = one_byte[byte], pos + 1
            else:
                length, pos = _read_varint(data, pos, 5)
            end = pos + length
            if length < 0 or end > size:
                raise CorruptRecords(f"record of {length} bytes overruns the batch")
            p = pos + 1  # after attributes
            if data[p] < 0x80:  # timestampDelta
                p += 1
            else:
                _, p = _read_varint(data, p, 10)
            if (byte := data[p]) < 0x80:
                offset_delta, p = one_byte[byte], p + 1
            else:
                offset_delta, p = _read_varint(data, p, 5)
            fields: list[bytes | None] = []
            for _ in range(2):  # key, value
                if (byte := data[p]) < 0x80:
                    length, p = one_byte[byte], p + 1
                else:
                    length, p = _read_varint(data, p, 5)
                if length >= 0 and p + length <= end:
                    fields.append(data[p : p + length])
                    p += length
                elif length == -1:
                    fields.append(None)
                else:
                    raise CorruptRecords(f"invalid field length {length} in its record")
            out.append((base_offset + offset_delta, fields[0], fields[1]))
            pos = end
    except IndexError as exc:
        raise CorruptRecords("record ends inside a varint") from exc
    if pos != size:
        raise CorruptRecords(f"{size - pos} bytes follow the last record")
    return out


def encode_records(records: Sequence[Record], base_offset: int, base_timestamp: int) -> bytes:
    out = bytearray()
    body = bytearray()
    for record in records:
        body.clear()
        body.append(record.attributes)
        _write_varint(body, record.timestamp - base_timestamp)
        _write_varint(body, record.offset - base_offset)
        _write_blob(body, record.key)
        _write_blob(body, record.value)
        _write_varint(body, len(record.headers))
        for name, value in record.headers:
            _write_blob(body, name.encode("utf-8"))
            _write_blob(body, value)
        _write_varint(out, len(body))
        out += body
    return bytes(out)


# --- codecs ---------------------------------------------------------------------------

_XERIAL_MAGIC = b"\x82SNAPPY\x00"
_XERIAL_HEADER = struct.Struct(">8sii")  # magic, version, minimum compatible version
_XERIAL_VERSION = 1
_XERIAL_BLOCK = 32 * 1024  # the Java client's SnappyOutputStream block size
_INT32 = struct.Struct(">i")


def _snappy_decompress(data: bytes) -> bytes:
    if not data.startswith(_XERIAL_MAGIC):
        return bytes(cramjam.snappy.decompress_raw(data))
    out = bytearray()
    pos = _XERIAL_HEADER.size
    while pos < len(data):
        if pos + 4 > len(data):
            raise CorruptRecords("xerial snappy chunk header is cut short")
        (size,) = _INT32.unpack_from(data, pos)
        pos += 4
        if size < 0 or pos + size > len(data):
            raise CorruptRecords(f"xerial snappy chunk of {size} bytes overruns the batch")
        out += bytes(cramjam.snappy.decompress_raw(data[pos : pos + size]))
        pos += size
        if len(out) > MAX_DECOMPRESSED_BYTES:
            break
    return bytes(out)


def _snappy_compress(data: bytes) -> bytes:
    out = bytearray(_XERIAL_HEADER.pack(_XERIAL_MAGIC, _XERIAL_VERSION, _XERIAL_VERSION))
    for start in range(0, len(data), _XERIAL_BLOCK):
        chunk = bytes(cramjam.snappy.compress_raw(data[start : start + _XERIAL_BLOCK]))
        out += _INT32.pack(len(chunk)) + chunk
    return bytes(out)


def _lz4_compress(data: bytes) -> bytes:
    # Independent blocks and no content checksum, like the Java client's KafkaLZ4BlockOutputStream.
    compressor = cramjam.lz4.Compressor(content_checksum=False, block_linked=False)
    compressor.compress(data)
    return bytes(compressor.finish())


def decompress(codec: int, data: bytes) -> bytes:
    try:
        if codec == GZIP:
            out = bytes(cramjam.gzip.decompress(data))
        elif codec == SNAPPY:
            out = _snappy_decompress(data)
        elif codec == LZ4:
            out = bytes(cramjam.lz4.decompress(data))
        elif codec == ZSTD:
            out = bytes(cramjam.zstd.decompress(data))
        else:
            raise CorruptRecords(f"unknown compression codec {codec}")
    except cramjam.DecompressionError as exc:
        raise CorruptRecords(f"{CODEC_NAMES[codec]} data does not decompress: {exc}") from exc
    if len(out) > MAX_DECOMPRESSED_BYTES:
        raise CorruptRecords(f"batch inflates beyond {MAX_DECOMPRESSED_BYTES} bytes")
    return out


def compress(codec: int, data: bytes) -> bytes:
    if codec == NONE:
        return data
    if codec == GZIP:
        return bytes(cramjam.gzip.compress(data))
    if codec == SNAPPY:
        return _snappy_compress(data)
    if codec == LZ4:
        return _lz4_compress(data)
    if codec == ZSTD:
        return bytes(cramjam.zstd.compress(data))
    raise ValueError(f"unknown compression codec {codec}")


# --- batches --------------------------------------------------------------------------


def decode_batch(data: bytes, header: BatchHeader) -> DecodedBatch:
    """The records of the batch `header` describes inside `data` (CRC not checked here:
    `RecordBatches.parse` does that where bytes enter the broker)."""
    payload = data[header.position + HEADER_SIZE : header.end]
    if header.compression != NONE:
        payload = decompress(header.compression, payload)
    log_append_time = header.max_timestamp if header.is_log_append_time else None
    records = decode_records(
        payload, header.records_count, header.base_offset, header.base_timestamp, log_append_time
    )
    return DecodedBatch(header, records)


def batch_keyed_records(data: bytes, header: BatchHeader) -> list[tuple[int, bytes | None, bytes | None]]:
    """(offset, key, value) of every record of the batch `header` describes inside
    `data`: what compaction and replay need, without building `Record`s."""
    payload = data[header.position + HEADER_SIZE : header.end]
    if header.compression != NONE:
        payload = decompress(header.compression, payload)
    return decode_keyed_records(payload, header.records_count, header.base_offset)


def decode_batches(data: bytes) -> Iterator[DecodedBatch]:
    """Every batch of a blob of whole batches, decoded."""
    for header in iter_headers(data):
        yield decode_batch(data, header)


def build_batch(
    records: Sequence[Record],
    *,
    base_offset: int | None = None,
    attributes: int = 0,
    base_timestamp: int | None = None,
    max_timestamp: int | None = None,
    last_offset_delta: int | None = None,
    producer_id: int = NO_PRODUCER_ID,
    producer_epoch: int = -1,
    base_sequence: int = NO_SEQUENCE,
    partition_leader_epoch: int = NO_PARTITION_LEADER_EPOCH,
) -> RecordBatches:
    """One v2 batch holding `records`, compressed per `attributes` & 0x07, with its CRC-32C,
    and its header as built: nothing needs parsing back before it is appended.

    Defaults follow the records: base offset and timestamp of the first,
    last offset delta of the last, max timestamp of all. Overrides keep a
    rewritten batch's identity (compaction keeps base offset and last offset
    delta, so producer sequences still line up; a delete horizon replaces
    the base timestamp). A batch may hold no records (Kafka keeps such a
    header to remember a producer's last sequence).
    """
    if base_offset is None:
        base_offset = records[0].offset if records else 0
    if base_timestamp is None:
        base_timestamp = records[0].timestamp if records else NO_TIMESTAMP
    if last_offset_delta is None:
        last_offset_delta = records[-1].offset - base_offset if records else 0
    if max_timestamp is None:
        if attributes & TIMESTAMP_TYPE_LOG_APPEND:
            raise ValueError("a LogAppendTime batch needs its max timestamp")
        max_timestamp = max((r.timestamp for r in records), default=NO_TIMESTAMP)
    payload = compress(attributes & COMPRESSION_MASK, encode_records(records, base_offset, base_timestamp))
    fields = [
        base_offset,
        HEADER_SIZE - LOG_OVERHEAD + len(payload),  # batchLength
        partition_leader_epoch,
        MAGIC,
        0,  # the CRC, filled in below
        attributes,
        last_offset_delta,
        base_timestamp,
        max_timestamp,
        producer_id,
        producer_epoch,
        base_sequence,
        len(records),
    ]
    buffer = bytearray(HEADER_SIZE)
    buffer += payload
    return _sealed(buffer, fields)


def build_keyed_batch(
    keys_values: Sequence[tuple[bytes | None, bytes | None]],
    base_offset: int,
    timestamp: int,
    *,
    attributes: int = 0,
    producer_id: int = NO_PRODUCER_ID,
    producer_epoch: int = -1,
    base_sequence: int = NO_SEQUENCE,
    partition_leader_epoch: int = NO_PARTITION_LEADER_EPOCH,
) -> RecordBatches:
    """`build_batch` of uncompressed records that carry a key and a value only, all stamped
    `timestamp`, at consecutive offsets from `base_offset`: what the broker writes to its own
    topics (an offset commit, on every commit). The same bytes, without a Record per record
    or the general path's defaults and compression (a third of its cost); the bytes the CRC
    covers are joined once and checked in one call, then the header's first fields put before
    them."""
    if attributes & COMPRESSION_MASK:
        raise ValueError("build_keyed_batch writes uncompressed batches")
    count = len(keys_values)
    # The header's fields after the CRC: what the CRC covers first.
    tail_fields = (
        attributes,
        count - 1,  # lastOffsetDelta
        timestamp,
        timestamp,
        producer_id,
        producer_epoch,
        base_sequence,
        count,
    )
    tail = _HEADER_TAIL.pack(*tail_fields)
    parts = [tail]
    for offset_delta, (key, value) in enumerate(keys_values):
        delta = _varint(offset_delta)
        key_length = _NULL if key is None else _varint(len(key))
        value_length = _NULL if value is None else _varint(len(value))
        key, value = key or b"", value or b""
        # attributes and timestampDelta (two zero bytes), offsetDelta, ..., no headers (one)
        body_length = 3 + len(delta) + len(key_length) + len(key) + len(value_length) + len(value)
        parts += (_varint(body_length), _ZEROS_2, delta, key_length, key, value_length, value, _ZEROS_1)
    covered = b"".join(parts)  # one join: no bytes object per record
    crc = crc32c(covered)
    batch_length = ATTRIBUTES_POSITION - LOG_OVERHEAD + len(covered)
    head = _HEADER_HEAD.pack(base_offset, batch_length, partition_leader_epoch, MAGIC, crc)
    # BatchHeader(...) without its Python __new__ (protocol.tuples; fields_given in
    # protocol.records): on every commit.
    fields = (0, base_offset, batch_length, partition_leader_epoch, MAGIC, crc, *tail_fields)
    header = new_tuple(BatchHeader, fields)
    return RecordBatches(head + covered, (header,))


def _sealed(buffer: bytearray, fields: list[int]) -> RecordBatches:
    """The batch in `buffer` (records after room for the header) with its header and CRC."""
    HEADER.pack_into(buffer, 0, *fields)
    fields[_CRC_FIELD] = crc = batch_crc(buffer, 0, len(buffer))
    _CRC.pack_into(buffer, CRC_POSITION, crc)
    return RecordBatches(bytes(buffer), (BatchHeader(0, *fields),))


P = ParamSpec("P")


def _bytes_of(build: Callable[P, RecordBatches]) -> Callable[P, bytes]:
    def encode(*args: P.args, **kwargs: P.kwargs) -> bytes:
        return build(*args, **kwargs).data

    return encode


# One v2 batch holding `records`, as bytes: `build_batch` without the header.
encode_batch = _bytes_of(build_batch)
