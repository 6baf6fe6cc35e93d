"""Which compacted logs the cleaner takes when it wakes (Kafka's LogCleanerManager).

Kafka's cleaner thread wakes every log.cleaner.backoff.ms and cleans a compacted log when
its dirty ratio (the bytes past the cleaner's checkpoint and below the first uncleanable
offset, over the bytes of the log below that offset) is above min.cleanable.dirty.ratio, or
when a dirty segment holds a record older than max.compaction.lag.ms (KIP-354)
(grabFilthiestCompactedLog, cleanableOffsets, maxCompactionDelay). It cleans the filthiest
such log and, having cleaned something, looks again at once: here every due log is cleaned
at a wake, the filthiest first, which is the same pace.

The checkpoint (Kafka's cleaner-offset-checkpoint file: where each log's dirty part starts)
is kept in memory: after a restart a log counts dirty from its start, and is cleaned once
more, as a Kafka broker whose checkpoint file is gone cleans it.
"""

from __future__ import annotations

import weakref
from collections.abc import Sequence
from typing import NamedTuple

from kafka_shim.storage.log import PartitionLog
from kafka_shim.storage.log_config import LogConfig


class SegmentExtent(NamedTuple):
    """One segment as the choice needs it, the active one last."""

    base_offset: int
    next_offset: int
    size: int  # bytes
    max_timestamp: int  # newest record (min.compaction.lag.ms)
    first_batch_timestamp: int  # its first batch's max timestamp, -1 unknown (max.compaction.lag.ms)


class CleanerCheckpoints:
    """Per log, the first offset the cleaner has not cleaned yet (Kafka's firstDirtyOffset)."""

    def __init__(self) -> None:
        self._first_dirty: weakref.WeakKeyDictionary[PartitionLog, int] = weakref.WeakKeyDictionary()

    def first_dirty(self, log: PartitionLog) -> int:
        """Kafka's rule: a checkpoint below the log start or past the log end (a log cut or
        replaced) counts from the log start."""
        offset = self._first_dirty.get(log, -1)
        if offset < log.log_start_offset or offset > log.log_end_offset:
            return log.log_start_offset
        return offset

    def cleaned_to(self, log: PartitionLog, offset: int) -> None:
        self._first_dirty[log] = offset


def dirty_ratio(segments: Sequence[SegmentExtent], first_dirty: int, uncleanable: int) -> tuple[float, int]:
    """(dirty bytes / bytes below the first uncleanable offset, dirty bytes): Kafka's
    LogToClean.cleanableRatio and cleanableBytes, in whole segments."""
    clean = dirty = 0
    for segment in segments:
        if segment.base_offset >= uncleanable:
            break
        if segment.next_offset <= first_dirty:
            clean += segment.size
        else:
            dirty += segment.size
    total = clean + dirty
    return (dirty / total if total else 0.0), dirty


def compaction_overdue(
    segments: Sequence[SegmentExtent], first_dirty: int, config: LogConfig, now_ms: int
) -> bool:
    """Kafka's maxCompactionDelay > 0: a closed dirty segment's first batch is older than
    max.compaction.lag.ms."""
    lag = max(config.max_compaction_lag_ms, 0)
    stamps = [s.first_batch_timestamp for s in segments[:-1] if s.next_offset > first_dirty]
    earliest = min((t for t in stamps if t > 0), default=None)
    return earliest is not None and earliest < now_ms - lag


class Cleanable(NamedTuple):
    ratio: float  # the filthiest goes first
    uncleanable: int  # where the round stops: the checkpoint once it is cleaned


def cleanable(
    segments: Sequence[SegmentExtent],
    first_dirty: int,
    *,
    stable_offset: int,
    config: LogConfig,
    now_ms: int,
) -> Cleanable | None:
    """The log as the cleaner takes it now (grabFilthiestCompactedLog's filter: overdue with
    dirty bytes, or a dirty ratio above min.cleanable.dirty.ratio), else None."""
    if not segments:
        return None
    from kafka_shim.storage import compaction  # the record codec loads only where topics compact

    spans = [compaction.SegmentSpan(s.base_offset, s.next_offset, s.max_timestamp) for s in segments]
    uncleanable = compaction.first_uncleanable_offset(
        spans, stable_offset=stable_offset, now_ms=now_ms, min_compaction_lag_ms=config.min_compaction_lag_ms
    )
    ratio, dirty = dirty_ratio(segments, first_dirty, uncleanable)
    overdue = dirty > 0 and compaction_overdue(segments, first_dirty, config, now_ms)
    if overdue or ratio > config.min_cleanable_dirty_ratio:
        return Cleanable(ratio, uncleanable)
    return None
