"""The log cleaner of a disk log: `storage.compaction` (pure functions over
batches) applied to closed segments, which `DiskLog.replace_segments` swaps
in crash-safely. Segments are cleaned in groups whose total size fits in
segment.bytes, so a cleaned segment never outgrows what appends would make;
segments younger than min.compaction.lag.ms, the active segment and segments
reaching the last stable offset (an open transaction may yet abort) are left.
"""

from __future__ import annotations

from collections.abc import Iterator

from kafka_shim.storage import compaction
from kafka_shim.storage.disk_log import DiskLog


def _groups(log: DiskLog, cleanable: list[tuple[int, int]]) -> Iterator[list[int]]:
    limit = log.config.segment_bytes
    group: list[int] = []
    size = 0
    for base, segment_size in cleanable:
        if group and size + segment_size > limit:
            yield group
            group, size = [], 0
        group.append(base)
        size += segment_size
    if group:
        yield group


def clean(log: DiskLog, now_ms: int) -> int:
    """Compact `log`'s cleanable segments; returns how many were rewritten."""
    stable = log.last_stable_offset
    ends = dict(log.closed_segments())
    cleanable = [
        (base, size)
        for base, size in log.cleanable_segments(now_ms - log.config.min_compaction_lag_ms)
        if ends[base] <= stable
    ]
    if not cleanable:
        return 0

    transactions = compaction.TransactionFilter(log.aborted_ranges(0, log.log_end_offset), stable)
    # One read and one scan of every segment builds both maps.
    latest: dict[bytes, int] = {}
    producers: dict[int, int] = {}
    for base in log.segment_bases():
        batches = list(compaction.scan([log.read_segment(base)]))
        compaction.add_latest_offsets(latest, batches, transactions)
        compaction.add_producer_last_offsets(producers, (batch.header for batch in batches))
    for group in _groups(log, cleanable):
        cleaned = compaction.compact(
            (log.read_segment(base) for base in group),
            latest,
            now_ms=now_ms,
            delete_retention_ms=log.config.delete_retention_ms,
            producer_last_offsets=producers,
            transactions=transactions,
        )
        log.replace_segments(group, cleaned)
    return len(cleanable)
