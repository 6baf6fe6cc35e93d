"""Record batch v2 framing: a view of the 61-byte headers of a records blob.

The broker never looks at individual records on the produce and fetch paths:
it validates each batch's frame and CRC-32C, assigns offsets by rewriting
`baseOffset` (outside the CRC), and stores and serves the bytes as they came.

Batch header layout (big-endian):

    baseOffset int64 | batchLength int32 | partitionLeaderEpoch int32 | magic int8
    | crc uint32 | attributes int16 | lastOffsetDelta int32 | baseTimestamp int64
    | maxTimestamp int64 | producerId int64 | producerEpoch int16
    | baseSequence int32 | recordsCount int32

`batchLength` counts the bytes after itself; the CRC covers everything from
`attributes` to the end of the batch.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
from typing import NamedTuple

import google_crc32c

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.protocol.tuples import fields_given, new_tuple

HEADER = struct.Struct(">qiibIhiqqqhii")
HEADER_SIZE = HEADER.size  # 61
_OFFSET_AND_EPOCH = struct.Struct(">qii")  # baseOffset, batchLength, partitionLeaderEpoch
LOG_OVERHEAD = 12  # baseOffset + batchLength: the bytes batchLength does not count
MAGIC = 2
# Where the fields the broker reads or rewrites sit inside a batch.
MAGIC_POSITION = 16  # also where magic sits in v0/v1 message sets
CRC_POSITION = 17
ATTRIBUTES_POSITION = 21
MAX_TIMESTAMP_POSITION = 35

COMPRESSION_MASK = 0x07
TIMESTAMP_TYPE_LOG_APPEND = 0x08
TRANSACTIONAL_FLAG = 0x10
CONTROL_FLAG = 0x20

NO_PRODUCER_ID = -1
NO_PRODUCER_EPOCH = -1
NO_SEQUENCE = -1
_INT32_SPAN = 1 << 31


class RecordsError(ValueError):
    """A records blob the broker refuses; `code` is what Produce answers."""

    code = ErrorCode.CORRUPT_MESSAGE


class CorruptRecords(RecordsError):
    code = ErrorCode.CORRUPT_MESSAGE


class UnsupportedMagic(RecordsError):
    """A v0/v1 message set: only record batch v2 (magic 2) is accepted."""

    code = ErrorCode.UNSUPPORTED_FOR_MESSAGE_FORMAT


class BatchHeader(NamedTuple):
    """One batch's header and where the batch sits in its blob (a tuple: one is made
    for every batch produced, and a 14-field frozen dataclass took 3 us)."""

    position: int
    base_offset: int
    batch_length: int
    partition_leader_epoch: int
    magic: int
    crc: int
    attributes: int
    last_offset_delta: int
    base_timestamp: int
    max_timestamp: int
    producer_id: int
    producer_epoch: int
    base_sequence: int
    records_count: int

    @property
    def size(self) -> int:
        return LOG_OVERHEAD + self.batch_length

    @property
    def end(self) -> int:
        return self.position + self.size

    @property
    def last_offset(self) -> int:
        return self.base_offset + self.last_offset_delta

    @property
    def compression(self) -> int:
        return self.attributes & COMPRESSION_MASK

    @property
    def is_log_append_time(self) -> bool:
        return bool(self.attributes & TIMESTAMP_TYPE_LOG_APPEND)

    @property
    def is_transactional(self) -> bool:
        return bool(self.attributes & TRANSACTIONAL_FLAG)

    @property
    def is_control(self) -> bool:
        return bool(self.attributes & CONTROL_FLAG)

    @property
    def has_producer_id(self) -> bool:
        return self.producer_id > NO_PRODUCER_ID

    @property
    def last_sequence(self) -> int:
        """Sequences wrap at int32, like Kafka's DefaultRecordBatch.incrementSequence."""
        if self.base_sequence == NO_SEQUENCE:
            return NO_SEQUENCE
        return (self.base_sequence + self.last_offset_delta) % _INT32_SPAN


# Headers are built without BatchHeader's Python `__new__` (protocol.tuples; a third of the
# cost): every Produce builds two, the one it parses and the one renumbered. Here and in
# record_codec: the batch's position, then HEADER's fields in their order.
fields_given(
    BatchHeader,
    *("position", "base_offset", "batch_length", "partition_leader_epoch", "magic", "crc"),
    *("attributes", "last_offset_delta", "base_timestamp", "max_timestamp"),
    *("producer_id", "producer_epoch", "base_sequence", "records_count"),
)


def _header_at(data: bytes | bytearray | memoryview, position: int) -> BatchHeader:
    """The header fields at `position`, unchecked: for framing already validated."""
    return new_tuple(BatchHeader, (position, *HEADER.unpack_from(data, position)))


def read_header(data: bytes | bytearray | memoryview, position: int = 0) -> BatchHeader:
    """The header of the batch at `position`, bounds- and magic-checked, CRC not verified."""
    available = len(data) - position
    if available < MAGIC_POSITION + 1:
        raise CorruptRecords(f"{available} bytes at {position} are shorter than a batch header")
    magic = data[position + MAGIC_POSITION]
    if magic != MAGIC:
        raise UnsupportedMagic(f"magic {magic} at {position}: only record batch v2 is supported")
    if available < HEADER_SIZE:
        raise CorruptRecords(f"{available} bytes at {position} are shorter than a batch header")
    header = _header_at(data, position)
    if header.batch_length < HEADER_SIZE - LOG_OVERHEAD:
        raise CorruptRecords(f"batch length {header.batch_length} at {position} is below the minimum")
    if LOG_OVERHEAD + header.batch_length > available:  # header.size, without the property call
        raise CorruptRecords(f"batch of {header.size} bytes at {position} exceeds the {available} left")
    if header.last_offset_delta < 0 or header.records_count < 0:
        raise CorruptRecords(f"negative record count or offset delta at {position}")
    return header


def iter_headers(data: bytes | bytearray | memoryview) -> Iterator[BatchHeader]:
    """Every batch header in a blob of whole batches; a partial batch is corrupt."""
    position = 0
    size = len(data)
    while position < size:
        header = read_header(data, position)
        yield header
        position += LOG_OVERHEAD + header.batch_length  # header.end, without two property calls


def crc_of(data: bytes | bytearray | memoryview, header: BatchHeader) -> int:
    return batch_crc(data, header.position, header.end)


def crc32c(data: bytes) -> int:
    """The CRC-32C of `data`: a batch's from its attributes on, as one bytes object."""
    return int(google_crc32c.value(data))


def batch_crc(data: bytes | bytearray | memoryview, position: int, end: int) -> int:
    """The CRC-32C of the batch spanning [position, end): what its header's crc must hold."""
    # google-crc32c takes only bytes: one copy of the batch (a slice of bytes is one, of
    # anything else through a view), cheaper than the other CRC-32C package's call plus its
    # 30 ms import at start-up.
    start = position + ATTRIBUTES_POSITION
    chunk = data[start:end] if type(data) is bytes else bytes(memoryview(data)[start:end])
    crc: int = google_crc32c.value(chunk)  # an int already: no int() call (every Produce)
    return crc


class RecordBatches:
    """A validated blob of one or more v2 batches, and their headers; never changed once made
    (a new one is built instead). A class with slots rather than a frozen dataclass: every
    append builds one, and a frozen dataclass's `__init__` sets each field through
    `object.__setattr__`, nearly three times the cost."""

    __slots__ = ("data", "headers")

    def __init__(self, data: bytes, headers: tuple[BatchHeader, ...]) -> None:
        self.data = data
        self.headers = headers

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, RecordBatches):
            return NotImplemented
        return self.data == other.data and self.headers == other.headers

    def __hash__(self) -> int:
        return hash((self.data, self.headers))

    def __repr__(self) -> str:
        return f"RecordBatches(data={self.data!r}, headers={self.headers!r})"

    @classmethod
    def parse(cls, data: bytes, *, verify_crc: bool = True) -> RecordBatches:
        """Validate framing (and CRCs): RecordsError on anything but whole v2 batches."""
        if type(data) is not bytes:  # bytes(data) of bytes is itself, through a call
            data = bytes(data)
        headers = []
        position, size = 0, len(data)
        while position < size:  # iter_headers, inlined: every Produce parses its batch here
            header = read_header(data, position)
            end = position + LOG_OVERHEAD + header.batch_length
            # One CRC pass per batch; records never decoded here.
            if verify_crc and batch_crc(data, position, end) != header.crc:
                raise CorruptRecords(f"CRC mismatch in the batch at {position}")
            headers.append(header)
            position = end
        if not headers:
            raise CorruptRecords("no record batch")
        return cls(data, tuple(headers))

    def __len__(self) -> int:
        return len(self.data)

    @property
    def first(self) -> BatchHeader:
        return self.headers[0]

    @property
    def last(self) -> BatchHeader:
        return self.headers[-1]

    @property
    def offset_count(self) -> int:
        """Offsets the blob occupies once appended: each batch's delta span, back to back."""
        return sum(h.last_offset_delta + 1 for h in self.headers)

    @property
    def max_timestamp(self) -> int:
        return max(h.max_timestamp for h in self.headers)

    def with_base_offset(self, base_offset: int, partition_leader_epoch: int | None = None) -> RecordBatches:
        """The same batches renumbered from `base_offset` (and stamped with the
        leader epoch, as a Kafka leader does); neither field is under the CRC.

        Batches follow each other without gaps: the next batch starts after
        the previous one's last offset.
        """
        if len(self.headers) == 1:
            # What every producer sends: the new 16-byte prefix joined to the rest, one copy,
            # and the header with the two fields replaced rather than read again.
            h = self.headers[0]
            epoch = h.partition_leader_epoch if partition_leader_epoch is None else partition_leader_epoch
            if h.base_offset == base_offset and h.partition_leader_epoch == epoch:
                return self  # built in place (the broker's own batch): nothing to rewrite
            prefix = _OFFSET_AND_EPOCH.pack(base_offset, h.batch_length, epoch)
            data = b"".join((prefix, memoryview(self.data)[_OFFSET_AND_EPOCH.size :]))
            # h[4:]: magic to records_count, in the order fields_given declares above.
            header = new_tuple(BatchHeader, (0, base_offset, h.batch_length, epoch, *h[4:]))
            return RecordBatches(data, (header,))
        if self._placed_at(base_offset, partition_leader_epoch):
            return self  # built in place (the broker's own batches): nothing to rewrite
        buffer = bytearray(self.data)
        next_offset = base_offset
        for h in self.headers:
            epoch = h.partition_leader_epoch if partition_leader_epoch is None else partition_leader_epoch
            _OFFSET_AND_EPOCH.pack_into(buffer, h.position, next_offset, h.batch_length, epoch)
            next_offset += h.last_offset_delta + 1
        # Re-reading the rewritten headers costs a third of dataclasses.replace (on every append).
        return RecordBatches(bytes(buffer), tuple(_header_at(buffer, h.position) for h in self.headers))

    def _placed_at(self, base_offset: int, partition_leader_epoch: int | None) -> bool:
        """Whether the batches start at `base_offset` and follow each other without gaps, with
        `partition_leader_epoch` (None: any) stamped in them."""
        next_offset = base_offset
        for h in self.headers:
            if h.base_offset != next_offset or partition_leader_epoch not in (None, h.partition_leader_epoch):
                return False
            next_offset += h.last_offset_delta + 1
        return True

    def with_log_append_time(self, now_ms: int) -> RecordBatches:
        """Stamp every batch with LogAppendTime, as a topic with
        message.timestamp.type=LogAppendTime does: attributes and maxTimestamp
        change, so each batch's CRC is recomputed (one pass, no record parsing).
        """
        buffer = bytearray(self.data)
        headers = []
        for h in self.headers:
            attributes = h.attributes | TIMESTAMP_TYPE_LOG_APPEND
            struct.pack_into(">h", buffer, h.position + ATTRIBUTES_POSITION, attributes)
            struct.pack_into(">q", buffer, h.position + MAX_TIMESTAMP_POSITION, now_ms)
            stamped = h._replace(attributes=attributes, max_timestamp=now_ms)
            crc = crc_of(buffer, stamped)
            struct.pack_into(">I", buffer, h.position + CRC_POSITION, crc)
            headers.append(stamped._replace(crc=crc))
        return RecordBatches(bytes(buffer), tuple(headers))
