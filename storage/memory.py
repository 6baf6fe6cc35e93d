"""A partition log held in memory: the stored batches plus parallel indexes
(base and last offsets for bisecting, a running max timestamp)."""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable
from itertools import accumulate

from protocol.records import RecordBatches
from storage.log import PartitionLog, TimestampOffset


class MemoryLog(PartitionLog):
    def __init__(self, on_append: Callable[[], None] = lambda: None) -> None:
        super().__init__(on_append)
        self._batches: list[bytes] = []
        self._base_offsets: list[int] = []
        self._last_offsets: list[int] = []
        # Running maximum of batch max timestamps: timestamp lookups bisect it.
        self._timestamp_ceiling: list[int] = []
        self._max_timestamps: list[int] = []
        self._end = 0
        self._start = 0

    @property
    def log_start_offset(self) -> int:
        return self._start

    @property
    def log_end_offset(self) -> int:
        return self._end

    def _write(self, batches: RecordBatches) -> None:
        data = batches.data
        for h in batches.headers:
            self._batches.append(data[h.position : h.end])
            self._base_offsets.append(h.base_offset)
            self._last_offsets.append(h.last_offset)
            self._max_timestamps.append(h.max_timestamp)
            ceiling = self._timestamp_ceiling[-1] if self._timestamp_ceiling else h.max_timestamp
            self._timestamp_ceiling.append(max(ceiling, h.max_timestamp))
        self._end = batches.last.last_offset + 1

    def delete_records(self, offset: int) -> int:
        self._start = self.records_deletion_target(offset)
        # Drop whole batches below the new start; the one holding it stays.
        keep = bisect_left(self._last_offsets, self._start)
        for column in (self._batches, self._base_offsets, self._last_offsets, self._max_timestamps):
            del column[:keep]
        self._timestamp_ceiling = list(accumulate(self._max_timestamps, max))
        return self._start

    def compact(self, now_ms: int, delete_retention_ms: int) -> int:
        """Log compaction (storage.compaction) over every batch: memory has no segments,
        so nothing is spared as active; offsets, log start and log end stay put.
        Returns how many batches remain."""
        from storage import compaction  # the record codec loads only where topics compact

        latest = compaction.latest_offsets(self._batches)
        producers = compaction.producer_last_offsets(self._batches)
        cleaned = compaction.compact(
            self._batches,
            latest,
            now_ms=now_ms,
            delete_retention_ms=delete_retention_ms,
            producer_last_offsets=producers,
        )
        end = self._end
        for column in (self._batches, self._base_offsets, self._last_offsets, self._max_timestamps):
            column.clear()
        self._timestamp_ceiling.clear()
        if cleaned:
            self._write(RecordBatches.parse(cleaned, verify_crc=False))
        self._end = end
        return len(self._batches)

    def read(self, offset: int, max_bytes: int, *, min_one: bool = True) -> bytes:
        self.check_fetch_offset(offset)
        index = bisect_left(self._last_offsets, offset)
        chosen: list[bytes] = []
        size = 0
        while index < len(self._batches):
            batch = self._batches[index]
            if size + len(batch) > max_bytes and (chosen or not min_one):
                break
            chosen.append(batch)
            size += len(batch)
            index += 1
        return b"".join(chosen)

    def offset_for_timestamp(self, timestamp: int) -> TimestampOffset | None:
        index = bisect_left(self._timestamp_ceiling, timestamp)
        if index == len(self._batches):
            return None
        return TimestampOffset(self._max_timestamps[index], self._base_offsets[index])

    def max_timestamp(self) -> TimestampOffset | None:
        if not self._batches:
            return None
        top = self._timestamp_ceiling[-1]
        index = bisect_left(self._timestamp_ceiling, top)
        return TimestampOffset(top, self._last_offsets[index])
