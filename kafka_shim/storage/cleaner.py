"""The log cleaner of a disk log: `storage.compaction` (pure functions over batches)
applied to closed segments, streamed, with bounded memory, and without holding the log's
lock while it reads, writes or fsyncs.

As Kafka's LogCleaner it works in two passes over the files:
1. the key map (`OffsetMap`, Kafka's SkimpyOffsetMap: a 16-byte hash of each key and the
   offset of its newest record, at most log.cleaner.dedupe.buffer.size / 24 x 0.9 keys) is
   built from the first segment to the round's end; when it is full, only the segments read whole before
   that point are cleaned this time (the rest at a later pass);
2. each group of cleanable segments (together no larger than segment.bytes, so a cleaned
   segment never outgrows what appends would make) is read in chunks of whole batches,
   compacted chunk by chunk into its `.cleaned` file, fsynced, verified and indexed; then,
   under the lock, swapped in by renames (`DiskLog.replace_segments`).
Segments are read by name, never through the log, so appends, fetches and retention go on
meanwhile; a swap whose segments retention or DeleteRecords took is dropped. A round covers
the segments below the first uncleanable offset (`compaction.first_uncleanable_offset`: the
active segment, the first segment reaching the last stable offset or younger than
min.compaction.lag.ms), and its key map only those, so a record superseded only in the
active segment stays until that segment rolls and is cleaned, as in Kafka.
"""

from __future__ import annotations

import hashlib
import logging
import os
import time
from collections.abc import Iterator
from pathlib import Path

from kafka_shim.protocol.records import HEADER, LOG_OVERHEAD, MAGIC, MAGIC_POSITION, MAX_TIMESTAMP_POSITION
from kafka_shim.storage import compaction
from kafka_shim.storage.cleaner_manager import Cleanable, CleanerCheckpoints, SegmentExtent, cleanable
from kafka_shim.storage.disk_log import DiskLog
from kafka_shim.storage.segment import whole_batches_length
from kafka_shim.storage.segment_list import SegmentFile

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
    config = log_.config
    uncleanable = compaction.first_uncleanable_offset(
        [compaction.SegmentSpan(s.base_offset, s.next_offset, s.max_timestamp) for s in segments],
        stable_offset=stable,
        now_ms=now_ms,
        min_compaction_lag_ms=config.min_compaction_lag_ms,
    )
    cleanable = [segment for segment in segments if segment.base_offset < uncleanable]
    if not cleanable:
        return 0

    transactions = compaction.TransactionFilter(log_.aborted_ranges(0, uncleanable), stable)
    offsets = OffsetMap(log_.options.cleaner_dedupe_buffer_size)
    try:
        mapped_to = _map(cleanable, offsets, transactions)
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
    producers = log_.last_records_of_active_producers()
    # One round: what it meets of each transaction, group after group, decides its marker.
    round_ = compaction.CleanedTransactions(transactions)
    cleaned = 0
    for group in _groups(config.segment_bytes, cleanable):
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
                            delete_retention_ms=config.delete_retention_ms,
                            active_producers=producers,
                            transactions=round_,
                        )
                    )
        except BaseException:
            replacement.discard()
            raise
        if log_.replace_segments(bases, replacement, emptied_aborts=round_.emptied_aborts):
            cleaned += len(group)
    return cleaned


def _map(cleanable: list[SegmentFile], offsets: OffsetMap, transactions: compaction.TransactionFilter) -> int:
    """Fill `offsets` from the segments to clean (Kafka's buildOffsetMap over the dirty section:
    nothing at or after the first uncleanable offset supersedes anything); returns the base
    offset of the first segment whose keys did not all fit (its end when all did): segments
    before it may be cleaned."""
    for segment in cleanable:
        for chunk in read_chunks(segment.path, segment.size):
            for batch in compaction.scan([chunk]):
                time.sleep(0)  # as between runs: the event loop's thread goes first
                if not transactions.stands(batch.header):
                    continue
                for offset, key, _ in batch.records:
                    if key is not None and not offsets.put(key, offset):
                        return segment.base_offset
    return cleanable[-1].next_offset


def _first_batch_timestamp(path: Path) -> int:
    """The max timestamp of a segment's first batch (-1: an older format, or unreadable)."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        return -1
    try:
        head = os.pread(fd, MAX_TIMESTAMP_POSITION + 8, 0)
    finally:
        os.close(fd)
    if len(head) < MAX_TIMESTAMP_POSITION + 8 or head[MAGIC_POSITION] != MAGIC:
        return -1
    return int.from_bytes(head[MAX_TIMESTAMP_POSITION:], "big", signed=True)


def clean_if_dirty(log_: DiskLog, now_ms: int, checkpoints: CleanerCheckpoints) -> Cleanable | None:
    """The cleaner's look at one compacted log (cleaner_manager): the log as it takes it, or
    None if it is not dirty enough yet."""
    config = log_.config
    # The first batches' timestamps are read only where max.compaction.lag.ms can have passed.
    lagging = config.max_compaction_lag_ms < now_ms
    extents = [
        SegmentExtent(
            s.base_offset,
            s.next_offset,
            s.size,
            s.max_timestamp,
            _first_batch_timestamp(s.path) if lagging else -1,
        )
        for s in log_.segment_files()
    ]
    return cleanable(
        extents,
        checkpoints.first_dirty(log_),
        stable_offset=log_.last_stable_offset,
        config=config,
        now_ms=now_ms,
    )
