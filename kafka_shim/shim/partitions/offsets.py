"""ListOffsets' lookups on one partition, as Kafka's Partition.fetchOffsetForTimestamp and,
for v0, UnifiedLog.legacyFetchOffsetsBefore: the special timestamps (latest, earliest, max
timestamp, the tiered ones), the first offset at or after a time, and v0's segment offsets."""

from __future__ import annotations

from kafka_shim.storage.log import PartitionLog, SegmentSpan

LATEST = -1
EARLIEST = -2
MAX_TIMESTAMP = -3
EARLIEST_LOCAL = -4  # no tiered storage, so the same as earliest
LATEST_TIERED = -5  # nothing is tiered, so no offset
EARLIEST_PENDING_UPLOAD = -6  # nothing is uploaded, so no offset
NOTHING_TIERED = (LATEST_TIERED, EARLIEST_PENDING_UPLOAD)
NO_TIMESTAMP = -1


def lookup(log: PartitionLog, timestamp: int, committed: bool) -> tuple[int, int, int]:
    """(timestamp, offset, leader epoch) for a request timestamp Kafka serves; (-1, -1, -1)
    when nothing is found below the last fetchable offset (the last stable offset under
    read_committed, else the high watermark)."""
    timestamp_found, offset = _find(log, timestamp, committed)
    if offset < 0:
        return timestamp_found, offset, -1
    return timestamp_found, offset, log.leader_epoch if timestamp == LATEST else log.epoch_at(offset)


def _find(log: PartitionLog, timestamp: int, committed: bool) -> tuple[int, int]:
    # The high watermark is the last offset of the last batch + 1, not its base offset + 1.
    fetchable = log.last_stable_offset if committed else log.high_watermark
    if timestamp == LATEST:
        return NO_TIMESTAMP, fetchable
    if timestamp in (EARLIEST, EARLIEST_LOCAL):
        return NO_TIMESTAMP, log.log_start_offset
    if timestamp in NOTHING_TIERED:
        return NO_TIMESTAMP, -1
    found = log.max_timestamp() if timestamp == MAX_TIMESTAMP else log.offset_for_timestamp(timestamp)
    if found is None or found.offset >= fetchable:
        return NO_TIMESTAMP, -1
    return found.timestamp, found.offset


def legacy_offsets(
    spans: list[SegmentSpan], log_end: int, timestamp: int, max_num: int, now_ms: int
) -> list[int]:
    """ListOffsets v0's offsets, as Kafka's legacyFetchOffsetsBefore picks them."""
    points = [(span.base_offset, span.last_modified_ms) for span in spans]
    if spans and not spans[-1].empty:
        points.append((log_end, now_ms))
    if timestamp == LATEST:
        start = len(points) - 1
    elif timestamp == EARLIEST:
        start = 0
    else:
        start = next((i for i in range(len(points) - 1, -1, -1) if points[i][1] <= timestamp), -1)
    found = [points[i][0] for i in range(start, max(start - max_num, -1), -1)]
    return sorted(found, reverse=True)


def legacy_lookup(log: PartitionLog, timestamp: int, max_num: int, consumer: bool, now_ms: int) -> list[int]:
    """v0's answer for the partition; a consumer's is capped at the high watermark."""
    offsets = legacy_offsets(log.segment_spans(now_ms), log.log_end_offset, timestamp, max_num, now_ms)
    high_watermark = log.high_watermark
    if consumer and any(offset > high_watermark for offset in offsets):
        offsets = [high_watermark] + [offset for offset in offsets if offset <= high_watermark]
    return offsets
