"""What a partition log asks of its segments, oldest first, the last active
(storage.disk_log.DiskLog holds the list and its lock; these run under that lock): which
segment holds an offset, the byte ranges a read takes across segments, the timestamp lookups,
the aborted ranges, and the closed segments a compaction replaces, and their swap."""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Collection
from itertools import chain
from pathlib import Path
from typing import NamedTuple

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.storage.errors import StorageError
from kafka_shim.storage.log import SegmentSpan, TimestampOffset, first_record_at_or_after
from kafka_shim.storage.log_config import LogConfig
from kafka_shim.storage.segment import Segment
from kafka_shim.storage.swap import Replacement
from kafka_shim.storage.txn_index import AbortedTxn, overlapping

# A range of a segment's log file to read: (segment, position, length).
Span = tuple[Segment, int, int]


class SegmentFile(NamedTuple):
    """One segment as it is now: what the cleaner reads without the log's lock."""

    base_offset: int
    next_offset: int
    size: int
    max_timestamp: int
    path: Path


def index_of(segments: list[Segment], offset: int) -> int:
    """The position of the segment holding `offset` (the first for one below them all)."""
    return max(bisect_right(segments, offset, key=lambda s: s.base_offset) - 1, 0)


def spans(segments: list[Segment], offset: int, max_bytes: int, min_one: bool) -> list[Span]:
    """Whole batches from the one holding `offset`, across segments while the budget lasts."""
    found: list[Span] = []
    budget = max_bytes
    # Most reads are of the active segment: no search, no copy of the list for them.
    at = len(segments) - 1 if offset >= segments[-1].base_offset else index_of(segments, offset)
    for segment in segments[at:] if at else segments:
        position, length, to_the_end = segment.span(offset, budget, min_one and not found)
        if length:
            found.append((segment, position, length))
        budget -= length
        # Go on into the next segment (also across a compaction gap that
        # leaves nothing at or after `offset` here) while budget remains.
        if not to_the_end or budget <= 0:
            break
        offset = segment.next_offset
    return found


def offset_for_timestamp(segments: list[Segment], timestamp: int) -> TimestampOffset | None:
    for segment in segments:
        found = segment.find_timestamp(timestamp)
        if found is not None:
            return found
    return None


def max_timestamp(segments: list[Segment]) -> TimestampOffset | None:
    best = None
    for segment in segments:  # the first segment reaching the max, as Kafka's maxBy
        if segment.size and (best is None or segment.max_timestamp > best.max_timestamp):
            best = segment
    if best is None:
        return None
    batch = best.batch_holding(best.offset_of_max_timestamp)  # the first batch reaching it
    if batch is None:
        return TimestampOffset(best.max_timestamp, best.offset_of_max_timestamp)
    return first_record_at_or_after(best.batch_bytes(batch), best.max_timestamp)


def aborted_ranges(segments: list[Segment], start_offset: int, end_offset: int) -> list[AbortedTxn]:
    entries = chain.from_iterable(s.txn_index.entries for s in segments[index_of(segments, start_offset) :])
    return overlapping(entries, start_offset, end_offset)


def count_below(segments: list[Segment], start: int) -> int:
    """How many leading segments hold only offsets below the log start `start`."""
    count = 0
    for following in segments[1:]:
        if following.base_offset > start:
            break
        count += 1
    return count


def rolls(active: Segment, incoming: int, config: LogConfig, now: int, active_since: int | None) -> bool:
    """Whether the active segment, first appended to at `active_since` (None: not since
    start-up), rolls before `incoming` bytes are appended: segment.bytes would be exceeded,
    or segment.ms has passed."""
    if active.size == 0:
        return False
    if active.size + incoming > config.segment_bytes:
        return True
    return active_since is not None and now - active_since >= config.roll_ms


def past_retention(segments: list[Segment], config: LogConfig, now: int) -> tuple[int, bool]:
    """How many leading closed `segments` are past retention.ms or retention.bytes (or
    empty), and whether the active segment (the last) is expired and to go after them,
    when they all go."""
    limited = config.retention_bytes >= 0
    excess = sum(s.size for s in segments) - config.retention_bytes
    count = 0
    for segment in segments:
        expired = config.retention_ms >= 0 and now - segment.largest_timestamp() > config.retention_ms
        if segment is segments[-1]:
            return count, expired and segment.size > 0
        if not (expired or (limited and excess >= segment.size) or segment.size == 0):
            break
        excess -= segment.size
        count += 1
    return count, False


def files(segments: list[Segment]) -> list[SegmentFile]:
    return [SegmentFile(s.base_offset, s.next_offset, s.size, s.max_timestamp, s.log_path) for s in segments]


def closed_segment(segments: list[Segment], base_offset: int, directory: Path) -> Segment:
    for segment in segments:
        if segment.base_offset == base_offset:
            return segment
    raise StorageError(ErrorCode.UNKNOWN_SERVER_ERROR, f"no closed segment at {base_offset} in {directory}")


def consecutive_closed(
    segments: list[Segment], base_offsets: list[int], directory: Path
) -> tuple[int, list[Segment]]:
    """Where the closed segments at `base_offsets` start in the list, and they; ValueError
    unless they are consecutive closed segments."""
    old = [closed_segment(segments, base, directory) for base in base_offsets]
    if segments[-1] in old:
        raise ValueError("the active segment cannot be replaced")
    first = segments.index(old[0])
    if segments[first : first + len(old)] != old:
        raise ValueError("replaced segments must be consecutive")
    return first, old


def swap(
    segments: list[Segment],
    first: int,
    old: list[Segment],
    replacement: Replacement,
    fresh: Segment,
    emptied_aborts: Collection[int],
) -> None:
    """Install `replacement` (finished as `fresh`) for the consecutive closed segments `old`,
    at `first` in the list: the renames and directory fsyncs of storage.swap. The aborted
    ranges closed by the ABORT markers at `emptied_aborts` (their transactions have no batch
    left) leave the transaction index; the others move to `fresh`."""
    aborted = [
        entry
        for segment in old
        for entry in segment.txn_index.entries
        if entry.last_offset not in emptied_aborts
    ]
    for segment in old:
        segment.close()
    replacement.install([s.base_offset for s in old])
    # The markers keep their offsets, so their aborted ranges move along; a crash before
    # this is repaired at open (log_recovery.adopt_orphan_txn_indexes).
    fresh.txn_index.rewrite(aborted)
    for segment in old[1:]:
        segment.txn_index.delete()
    segments[first : first + len(old)] = [fresh]


def listed(segments: list[Segment], start: int, now_ms: int) -> list[SegmentSpan]:
    """Each segment's first offset at or past the log start `start`, whether it is empty, and
    when it was last written (ListOffsets' legacy answers)."""
    return [
        SegmentSpan(max(segment.base_offset, start), segment.size == 0, _modified_ms(segment, now_ms))
        for segment in segments
    ]


def _modified_ms(segment: Segment, now_ms: int) -> int:
    """When the segment's log file was last written; `now_ms` for one not made yet (a new
    partition's first segment, never written to)."""
    try:
        return segment.log_path.stat().st_mtime_ns // 1_000_000
    except FileNotFoundError:
        return now_ms
