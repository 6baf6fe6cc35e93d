"""The log cleaner of a disk log: `storage.compaction` (pure functions over batches)
applied to closed segments, streamed, with bounded memory, and without holding the log's
lock while it reads, writes or fsyncs.

As Kafka's LogCleaner it works in two passes over the files:
1. the key map (`OffsetMap`, Kafka's SkimpyOffsetMap: a 16-byte hash of each key and the
   offset of its newest record, at most log.cleaner.dedupe.buffer.size / 24 x 0.9 keys) is
   built from the first segment on; when it is full, only the segments read whole before
   that point are cleaned this time (the rest at a later pass);
2. each group of cleanable segments (together no larger than segment.bytes, so a cleaned
   segment never outgrows what appends would make) is read in chunks of whole batches,
   compacted chunk by chunk into its `.cleaned` file, fsynced, verified and indexed; then,
   under the lock, swapped in by renames (`DiskLog.replace_segments`).
Segments are read by name, never through the log, so appends, fetches and retention go on
meanwhile; a swap whose segments retention or DeleteRecords took is dropped. Segments
younger than min.compaction.lag.ms, the active segment and segments reaching the last
stable offset (an open transaction may yet abort) are left.
"""

from __future__ import annotations

import hashlib
import logging
import os
import time
from collections.abc import Iterator
from pathlib import Path

from kafka_shim.protocol.records import HEADER, LOG_OVERHEAD
from kafka_shim.storage import compaction
from kafka_shim.storage.disk_log import DiskLog, SegmentFile
from kafka_shim.storage.segment import whole_batches_length

log = logging.getLogger("kafka_shim.storage")

# Kafka's SkimpyOffsetMap: a 16-byte MD5 of the key and an 8-byte offset per entry, the map
# filled to log.cleaner.io.buffer.load.factor (0.9).
ENTRY_BYTES = 24
LOAD_FACTOR = 0.9
# How much of a segment is read (and compacted) at once: the cleaner's memory besides its map.
CHUNK_BYTES = 1024 * 1024


class OffsetMap:
    """The newest offset of each key, by the key's hash, for at most `capacity` keys (a
    collision of two keys' 16-byte hashes is as unlikely here as in Kafka). Python holds an
    entry in about five times Kafka's 24 bytes: the map's memory is bounded by its key count."""

    def __init__(self, buffer_bytes: int) -> None:
        self.capacity = max(1, int(buffer_bytes // ENTRY_BYTES * LOAD_FACTOR))
        self._offsets: dict[bytes, int] = {}

    @staticmethod
    def _hash(key: bytes) -> bytes:
        return hashlib.md5(key, usedforsecurity=False).digest()

    def put(self, key: bytes, offset: int) -> bool:
        """Record `offset` as the key's newest; False (nothing changed) when the map is full
        and the key is not in it yet."""
        digest = self._hash(key)
        if len(self._offsets) >= self.capacity and digest not in self._offsets:
            return False
        self._offsets[digest] = offset
        return True

    def get(self, key: bytes, default: int) -> int:
        return self._offsets.get(self._hash(key), default)

    def __len__(self) -> int:
        return len(self._offsets)


def read_chunks(path: Path, size: int, chunk_bytes: int = CHUNK_BYTES) -> Iterator[bytes]:
    """The first `size` bytes of a segment file as runs of whole batches, about `chunk_bytes`
    each (a batch larger than that comes alone)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        position = 0
        while position < size:
            data = os.pread(fd, min(max(chunk_bytes, HEADER.size), size - position), position)
            whole = whole_batches_length(data)
            if whole == 0:  # one batch larger than a chunk
                length = LOG_OVERHEAD + HEADER.unpack_from(data, 0)[1]
                data = os.pread(fd, length, position)
                whole = len(data)
            if whole == 0:
                raise ValueError(f"{path} ends inside a batch at byte {position}")
            yield data[:whole]
            position += whole
            # The cleaner is Python on the broker's process: between runs it lets the event
            # loop's thread take the interpreter at once, not at the next switch interval.
            time.sleep(0)
    finally:
        os.close(fd)


def _groups(limit: int, cleanable: list[SegmentFile]) -> Iterator[list[SegmentFile]]:
    group: list[SegmentFile] = []
    size = 0
    for segment in cleanable:
        if group and size + segment.size > limit:
            yield group
            group, size = [], 0
        group.append(segment)
        size += segment.size
    if group:
        yield group


def clean(log_: DiskLog, now_ms: int) -> int:
    """Compact `log_`'s cleanable segments; returns how many were rewritten."""
    stable = log_.last_stable_offset
    segments = log_.segment_files()
    newest = now_ms - log_.config.min_compaction_lag_ms
    cleanable: list[SegmentFile] = []
    for segment in segments[:-1]:
        if segment.max_timestamp > newest or segment.next_offset > stable:
            break
        cleanable.append(segment)
    if not cleanable:
        return 0

    transactions = compaction.TransactionFilter(log_.aborted_ranges(0, log_.log_end_offset), stable)
    offsets = OffsetMap(log_.options.cleaner_dedupe_buffer_size)
    producers: dict[int, int] = {}
    try:
        mapped_to = _map(segments, offsets, producers, transactions)
    except FileNotFoundError:  # retention or DeleteRecords took a segment meanwhile
        return 0
    if mapped_to <= cleanable[0].base_offset:
        log.warning(
            "%s not cleaned: its first segment holds more keys than log.cleaner.dedupe.buffer.size (%d)",
            log_.directory.name,
            offsets.capacity,
        )
        return 0
    cleanable = [segment for segment in cleanable if segment.next_offset <= mapped_to]
    cleaned = 0
    for group in _groups(log_.config.segment_bytes, cleanable):
        bases = [segment.base_offset for segment in group]
        replacement = log_.begin_replacement(bases)
        try:
            for segment in group:
                for chunk in read_chunks(segment.path, segment.size):
                    replacement.write(
                        compaction.compact(
                            [chunk],
                            offsets,
                            now_ms=now_ms,
                            delete_retention_ms=log_.config.delete_retention_ms,
                            producer_last_offsets=producers,
                            transactions=transactions,
                        )
                    )
        except BaseException:
            replacement.discard()
            raise
        if log_.replace_segments(bases, replacement):
            cleaned += len(group)
    return cleaned


def _map(
    segments: list[SegmentFile],
    offsets: OffsetMap,
    producers: dict[int, int],
    transactions: compaction.TransactionFilter,
) -> int:
    """Fill `offsets` from the first segment on, and `producers` with every producer's last
    batch (from the whole log); returns the base offset of the first segment whose keys did
    not all fit (the log end when all did): segments before it may be cleaned."""
    full_at: int | None = None
    for segment in segments:
        for chunk in read_chunks(segment.path, segment.size):
            for batch in compaction.scan([chunk]):
                time.sleep(0)  # as between runs: the event loop's thread goes first
                header = batch.header
                if header.has_producer_id:
                    producers[header.producer_id] = header.last_offset
                if full_at is not None or not transactions.stands(header):
                    continue
                for offset, key, _ in batch.records:
                    if key is not None and not offsets.put(key, offset):
                        full_at = segment.base_offset
                        break
    return segments[-1].next_offset if full_at is None else full_at
