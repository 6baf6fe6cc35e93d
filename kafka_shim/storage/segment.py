"""One segment of a partition log: a `.log` file of record batches exactly as
stored (offsets assigned), named by its 20-digit base offset like Kafka's,
plus its sparse `.index` and `.timeindex` (see `storage.index`) and the
`.txnindex` of the transactions aborted in it (see `storage.txn_index`).

Appends go to the OS with one `os.write` (unbuffered): once `append` returns
the bytes survive a kill -9 of the process; fsync is the caller's policy.
Reads are `os.pread` slices of the file, never re-encoded; the active segment keeps a copy
of what it last wrote (up to TAIL_BYTES, see `Segment.append`), and reads that fall inside it
(a consumer keeping up with the producer) are served from it without a system call.
"""

from __future__ import annotations

import mmap
import os
import struct
from bisect import bisect_right
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple

from kafka_shim.protocol.control_records import EndTxnMarker, read_marker
from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.protocol.records import (
    HEADER,
    HEADER_SIZE,
    LOG_OVERHEAD,
    MAX_TIMESTAMP_POSITION,
    BatchHeader,
    RecordBatches,
    RecordsError,
    read_header,
)
from kafka_shim.protocol.tuples import fields_given, new_tuple
from kafka_shim.storage import faults
from kafka_shim.storage.errors import StorageError
from kafka_shim.storage.index import OFFSET_LAYOUT, TIME_LAYOUT, SparseIndex, strictly_increasing
from kafka_shim.storage.log import TimestampOffset, first_record_at_or_after
from kafka_shim.storage.scan import NO_TIMESTAMP, Damage, ScanResult, scan
from kafka_shim.storage.txn_index import TXN_INDEX_SUFFIX, TxnIndex

LOG_SUFFIX = ".log"
INDEX_SUFFIX = ".index"
TIME_INDEX_SUFFIX = ".timeindex"
# The newest bytes an active segment keeps a copy of: the small batches a consumer at the end of
# the log fetches next. Bounded per partition (only what was appended since the segment was
# opened or rolled is kept, and a sealed segment drops it).
TAIL_BYTES = 16 * 1024
# The header fields a batch's position needs (protocol.records.HEADER's baseOffset,
# batchLength, lastOffsetDelta and maxTimestamp), the others skipped: every fetch reads these.
_POSITION_FIELDS = struct.Struct(">qi11xi8xq")
assert _POSITION_FIELDS.size == MAX_TIMESTAMP_POSITION + 8


def file_stem(base_offset: int) -> str:
    return f"{base_offset:020d}"


class SegmentMark(NamedTuple):
    size: int
    next_offset: int
    max_timestamp: int
    offset_of_max_timestamp: int
    since_entry: int
    offset_entries: int
    time_entries: int


fields_given(  # Segment.mark builds it without its Python __new__ (protocol.tuples)
    SegmentMark,
    *("size", "next_offset", "max_timestamp", "offset_of_max_timestamp", "since_entry"),
    *("offset_entries", "time_entries"),
)


class BatchPosition(NamedTuple):  # a tuple: one per batch header every fetch walks
    position: int
    base_offset: int
    last_offset: int
    size: int
    max_timestamp: int


# Segment._batch_at builds it without its Python __new__ (protocol.tuples).
fields_given(BatchPosition, "position", "base_offset", "last_offset", "size", "max_timestamp")


class Segment:
    def __init__(self, directory: Path, base_offset: int, index_interval: int) -> None:
        self.base_offset = base_offset
        stem = directory / file_stem(base_offset)
        self.log_path = stem.with_suffix(LOG_SUFFIX)
        self.offset_index = SparseIndex(stem.with_suffix(INDEX_SUFFIX), OFFSET_LAYOUT)
        self.time_index = SparseIndex(stem.with_suffix(TIME_INDEX_SUFFIX), TIME_LAYOUT)
        self.txn_index = TxnIndex(stem.with_suffix(TXN_INDEX_SUFFIX))
        self.index_interval = index_interval
        self.size = 0
        self.next_offset = base_offset
        self.max_timestamp = NO_TIMESTAMP
        self.offset_of_max_timestamp = -1
        self._since_entry = index_interval  # the first batch is indexed, as `scan` does
        self._fd: int | None = None
        self._unindexed: ScanResult | None = None
        # A copy of the file's bytes [_tail_start, _tail_start + len(_tail)), as appended.
        self._tail_start = 0
        self._tail = bytearray()

    def __repr__(self) -> str:
        return f"Segment({self.log_path}, [{self.base_offset}, {self.next_offset}), {self.size} bytes)"

    def largest_timestamp(self) -> int:
        """What retention.ms measures, as Kafka's LogSegment.largestTimestamp: the newest record's
        time, or where no batch gave one (magic 0 message sets; a v2 batch whose header says -1,
        as sarama 1.22 writes) when the file was last written, not -1, which would be long expired."""
        if self.max_timestamp >= 0:
            return self.max_timestamp
        try:
            return self.log_path.stat().st_mtime_ns // 1_000_000
        except OSError:
            return NO_TIMESTAMP

    # -- opening ------------------------------------------------------------

    @classmethod
    def create(cls, directory: Path, base_offset: int, index_interval: int, *, files: bool = True) -> Segment:
        """A new, empty segment; without `files` its files are made by its first append (the
        log file by `fd`, each index by its first entry), as a new partition's first segment
        is: three file creations a partition less, for the many never written to."""
        segment = cls(directory, base_offset, index_interval)
        if files:
            segment.log_path.write_bytes(b"")
            segment.offset_index.rewrite([])
            segment.time_index.rewrite([])
        return segment

    @classmethod
    def recover(
        cls, directory: Path, base_offset: int, index_interval: int, expected_offset: int
    ) -> tuple[Segment, Damage | None]:
        """Open by verifying every batch (CRC included) and rebuilding the
        indexes; the segment holds what precedes any damage, which is returned
        for the caller to refuse or truncate."""
        segment = cls(directory, base_offset, index_interval)
        result = cls.scan_file(
            segment.log_path, base_offset, index_interval, max(expected_offset, base_offset)
        )
        segment._adopt(result)
        if result.damage is None:
            segment._write_indexes(result)
        else:
            # Indexes follow only once the caller has decided to truncate:
            # a refused start must leave every file as it found it.
            segment._unindexed = result
        return segment, result.damage

    @staticmethod
    def scan_file(path: Path, base_offset: int, index_interval: int, expected_offset: int) -> ScanResult:
        """Every batch of a segment file verified (CRC included), its index entries made."""
        if path.stat().st_size == 0:
            return ScanResult(end=0, next_offset=expected_offset)
        with open(path, "rb") as file, mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ) as data:
            return scan(
                data,
                start=0,
                base_offset=base_offset,
                expected_offset=expected_offset,
                index_interval=index_interval,
            )

    def stage_indexes(self, result: ScanResult, suffix: str) -> list[tuple[Path, Path]]:
        """Take `result` (of this segment's content) and write its indexes beside their
        files, named with `suffix`: (staged, final) paths, for the caller to rename."""
        self._adopt(result)
        staged = []
        for index, entries in (
            (self.offset_index, result.offset_entries),
            (self.time_index, result.time_entries),
        ):
            final = index.path
            index.path = final.with_name(final.name + suffix)
            index.rewrite(entries)
            index.path = final
            staged.append((final.with_name(final.name + suffix), final))
        return staged

    def _write_indexes(self, result: ScanResult) -> None:
        self.offset_index.rewrite(result.offset_entries)
        self.time_index.rewrite(result.time_entries)

    @classmethod
    def load(cls, directory: Path, base_offset: int, index_interval: int) -> Segment | None:
        """Open from its index files after a clean shutdown, walking only the
        batches after the last index entry; None when an index is missing or
        inconsistent with the log (the caller then recovers the segment)."""
        segment = cls(directory, base_offset, index_interval)
        if not (segment.offset_index.load() and segment.time_index.load()):
            return None
        size = segment.log_path.stat().st_size
        last = segment.offset_index.last
        if not segment._indexes_fit(size):
            return None
        start = last[1] if last is not None else 0
        with open(segment.log_path, "rb") as file:
            file.seek(start)
            tail = file.read()
        result = scan(
            tail,
            start=0,
            base_offset=base_offset,
            expected_offset=base_offset,
            index_interval=index_interval,
            verify_crc=False,
        )
        if result.damage is not None or start + result.end != size:
            return None
        segment.size = size
        segment.next_offset = result.next_offset if result.batches else base_offset
        time_last = segment.time_index.last
        segment.max_timestamp, segment.offset_of_max_timestamp = (
            (time_last[0], base_offset + time_last[1]) if time_last is not None else (NO_TIMESTAMP, -1)
        )
        if result.max_timestamp > segment.max_timestamp:
            segment.max_timestamp = result.max_timestamp
            segment.offset_of_max_timestamp = result.offset_of_max_timestamp
        segment._since_entry = result.end - (result.offset_entries[-1][1] if result.offset_entries else 0)
        return segment

    def _indexes_fit(self, log_size: int) -> bool:
        positions = self.offset_index.values
        return (
            strictly_increasing(self.offset_index.keys)
            and strictly_increasing(positions)
            and (not positions or (positions[0] >= 0 and positions[-1] < log_size))
            and strictly_increasing(self.time_index.keys)
        )

    def _adopt(self, result: ScanResult) -> None:
        self.size = result.end
        self.next_offset = result.next_offset if result.batches else self.base_offset
        self.max_timestamp = result.max_timestamp
        self.offset_of_max_timestamp = result.offset_of_max_timestamp
        last_entry = result.offset_entries[-1][1] if result.offset_entries else 0
        self._since_entry = result.end - last_entry if result.offset_entries else self.index_interval

    def truncate_to_valid(self) -> None:
        """Cut the file after the last valid batch (recovery found damage there)."""
        self._drop_tail()
        os.truncate(self.log_path, self.size)
        if self._unindexed is not None:
            self._write_indexes(self._unindexed)
            self._unindexed = None

    # -- writing ------------------------------------------------------------

    @property
    def fd(self) -> int:
        if self._fd is None:
            self._fd = os.open(self.log_path, os.O_RDWR | os.O_CREAT | os.O_APPEND, 0o644)
        return self._fd

    def append(self, batches: RecordBatches, mark: SegmentMark | None = None) -> None:
        """All of `batches` with their index entries, or nothing: a write that fails (a full
        disk, an I/O error) is cut off again, so the segment still ends at a whole batch and
        the next append follows it. StorageError(KAFKA_STORAGE_ERROR) then. `mark`: where
        the segment ends now, when the caller took it already."""
        if mark is None:
            mark = self.mark()
        try:
            faults.check("log")
            _write_all(self.fd, batches.data)
            self._index(batches)
        except OSError as exc:
            self.rewind(mark)
            raise StorageError(ErrorCode.KAFKA_STORAGE_ERROR, f"cannot write {self.log_path}: {exc}") from exc
        self._keep_tail(batches.data)
        self.size += len(batches.data)
        last = batches.headers[-1]
        self.next_offset = last.base_offset + last.last_offset_delta + 1  # last_offset, sans property

    def _keep_tail(self, data: bytes) -> None:
        """Keep `data`, just written at the end of the file, as the newest part of the tail
        copy (written: a failed write never reaches here, and `rewind` drops the copy). The
        copy grows in place, so an append costs a copy of its own bytes, not of the tail."""
        if len(data) > TAIL_BYTES:
            self._drop_tail()
            return
        if self._tail_start + len(self._tail) != self.size or len(self._tail) + len(data) > TAIL_BYTES:
            self._tail_start, self._tail = self.size, bytearray()
        self._tail += data

    def _drop_tail(self) -> None:
        self._tail_start, self._tail = 0, bytearray()

    def _index(self, batches: RecordBatches) -> None:
        for header in batches.headers:
            if header.max_timestamp > self.max_timestamp:
                self.max_timestamp = header.max_timestamp
                self.offset_of_max_timestamp = header.last_offset
            if self._since_entry >= self.index_interval:
                self.offset_index.append(header.last_offset - self.base_offset, self.size + header.position)
                last_time = self.time_index.last
                if last_time is None or self.max_timestamp > last_time[0]:
                    self.time_index.append(
                        self.max_timestamp, self.offset_of_max_timestamp - self.base_offset
                    )
                self._since_entry = 0
            self._since_entry += LOG_OVERHEAD + header.batch_length  # header.size, sans property

    def mark(self) -> SegmentMark:
        """Where the segment ends now, for `rewind` (taken before every append: built without
        the Python frame of a NamedTuple's `__new__`)."""
        fields = (
            self.size,
            self.next_offset,
            self.max_timestamp,
            self.offset_of_max_timestamp,
            self._since_entry,
            len(self.offset_index.keys),
            len(self.time_index.keys),
        )
        return new_tuple(SegmentMark, fields)

    def rewind(self, mark: SegmentMark) -> None:
        """Cut off everything appended since `mark` (a write that failed or was not made
        durable). Shrinking a file needs no space, so this works on a full disk."""
        self._drop_tail()
        os.ftruncate(self.fd, mark.size)
        self.offset_index.truncate(mark.offset_entries)
        self.time_index.truncate(mark.time_entries)
        (
            self.size,
            self.next_offset,
            self.max_timestamp,
            self.offset_of_max_timestamp,
            self._since_entry,
        ) = mark[:5]

    def flush(self) -> None:
        """fsync the log file (indexes are rebuilt from it when in doubt)."""
        if self._fd is not None:
            faults.check("fsync")
            os.fsync(self._fd)

    def seal(self) -> None:
        """The segment stops being active: flush it with its indexes, which are
        then trusted by the next clean start."""
        self._drop_tail()
        self.flush()
        for index in (self.offset_index, self.time_index, self.txn_index):
            index.flush()
            index.close()

    def close(self) -> None:
        self._drop_tail()
        self.offset_index.close()
        self.time_index.close()
        self.txn_index.close()
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def delete(self) -> None:
        self.close()
        for path in (self.log_path, self.offset_index.path, self.time_index.path):
            path.unlink(missing_ok=True)
        self.txn_index.delete()

    # -- reading ------------------------------------------------------------

    def read_at(self, position: int, length: int) -> bytes:
        """The file's `length` bytes at `position`: from the tail copy when it holds them all."""
        start = position - self._tail_start
        if start >= 0 and start + length <= len(self._tail):
            # A slice, not a view: the copy may grow again (a view would have to be released
            # first), and for a fetch's few hundred bytes slicing twice costs less than a view.
            return bytes(self._tail[start : start + length])
        return os.pread(self.fd, length, position)

    def _batch_at(self, position: int) -> BatchPosition:
        # Batches on disk were validated when appended or recovered: their headers are read as is.
        start = position - self._tail_start
        if start >= 0 and start + _POSITION_FIELDS.size <= len(self._tail):
            base, length, delta, max_ts = _POSITION_FIELDS.unpack_from(self._tail, start)
        else:
            base, length, delta, max_ts = _POSITION_FIELDS.unpack(
                os.pread(self.fd, _POSITION_FIELDS.size, position)
            )
        return new_tuple(BatchPosition, (position, base, base + delta, LOG_OVERHEAD + length, max_ts))

    def batches_from(self, position: int = 0) -> Iterator[BatchPosition]:
        while position < self.size:
            batch = self._batch_at(position)
            yield batch
            position += batch.size

    def batches_with_markers_from(self, offset: int) -> Iterator[tuple[BatchHeader, EndTxnMarker | None]]:
        """The full headers of the batches from the one holding `offset` to the end,
        each control batch with the transaction marker it holds."""
        first = self.batch_holding(offset)
        if first is None:
            return
        with (
            open(self.log_path, "rb") as file,
            mmap.mmap(file.fileno(), self.size, access=mmap.ACCESS_READ) as mapped,
            memoryview(mapped) as data,
        ):
            position = first.position
            while position < self.size:
                header = read_header(data, position)
                yield header, _marker_of(data, header) if header.is_control else None
                position = header.end

    def batch_holding(self, offset: int) -> BatchPosition | None:
        """The first batch whose last offset is >= `offset` (the one holding it,
        or the next one across a compaction gap); None past the end."""
        entry = self.offset_index.floor(offset - self.base_offset)
        position = entry[1] if entry is not None else 0
        while position < self.size:  # batches_from, without a generator: every fetch walks this
            batch = self._batch_at(position)
            if batch.last_offset >= offset:
                return batch
            position += batch.size
        return None

    def span(self, offset: int, max_bytes: int, min_one: bool) -> tuple[int, int, bool]:
        """Where the whole batches from the one holding `offset` lie in the file (position,
        length), and whether they run to the end of the segment (the caller may go on in the
        next one). Only batch headers are read."""
        first = self.batch_holding(offset)
        if first is None:
            return 0, 0, True
        if first.size > max_bytes:
            if not min_one:
                return first.position, 0, False
            return first.position, first.size, first.position + first.size == self.size
        end = first.position + min(max_bytes, self.size - first.position)
        if end < self.size:
            end = self._whole_batches_end(first.position, end)
        return first.position, end - first.position, end == self.size

    def _whole_batches_end(self, start: int, limit: int) -> int:
        """The end of the last whole batch between `start` (a batch's position) and `limit`:
        the headers from the last indexed batch before `limit` on are read, in one pread."""
        positions = self.offset_index.values
        at = bisect_right(positions, limit) - 1
        start = max(start, positions[at]) if at >= 0 else start
        return start + whole_batches_length(self.read_at(start, limit - start))

    def read(self, offset: int, max_bytes: int, min_one: bool) -> tuple[bytes, bool]:
        """Whole batches from the one holding `offset` (see `span`)."""
        position, length, to_the_end = self.span(offset, max_bytes, min_one)
        return (self.read_at(position, length) if length else b""), to_the_end

    def find_timestamp(self, timestamp: int) -> TimestampOffset | None:
        """The first record at or after `timestamp`, in the first batch whose max timestamp is."""
        if self.max_timestamp < timestamp:
            return None
        entry = self.time_index.floor(timestamp - 1)
        start_offset = self.base_offset + entry[1] + 1 if entry is not None else self.base_offset
        first = self.batch_holding(start_offset)
        if first is None:
            return None
        for batch in self.batches_from(first.position):
            if batch.max_timestamp >= timestamp:
                return first_record_at_or_after(self.batch_bytes(batch), timestamp)
        return None

    def batch_bytes(self, batch: BatchPosition) -> bytes:
        return self.read_at(batch.position, batch.size)


def whole_batches_length(data: bytes) -> int:
    """How many leading bytes of `data` are whole batches."""
    position = 0
    while position + HEADER_SIZE <= len(data):  # no batch is shorter than its header
        end = position + LOG_OVERHEAD + HEADER.unpack_from(data, position)[1]  # batchLength
        if end > len(data):
            break
        position = end
    return position


def _marker_of(data: memoryview, header: BatchHeader) -> EndTxnMarker | None:
    try:
        return read_marker(bytes(data[header.position : header.end]), header._replace(position=0))
    except RecordsError:
        return None  # not a marker this broker can read: it closes no transaction


def _write_all(fd: int, data: bytes) -> None:
    written = os.write(fd, data)  # all of it, nearly always: no view until it is not
    if written < len(data):
        view = memoryview(data)[written:]
        while view:
            view = view[os.write(fd, view) :]
