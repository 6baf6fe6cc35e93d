"""A partition log held in memory: the stored batches plus parallel indexes
(base and last offsets for bisecting, a running max timestamp) and the aborted
transactions."""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable, Iterator
from itertools import accumulate, islice
from typing import Any

from kafka_shim.protocol.records import RecordBatches
from kafka_shim.storage.cleaner_manager import SegmentExtent
from kafka_shim.storage.log import AppendHook, PartitionLog, TimestampOffset, first_record_at_or_after
from kafka_shim.storage.txn_index import AbortedTxn, overlapping

# The name an in-memory broker gives its one log directory: Kafka always has one.
MEMORY_LOG_DIR = ":memory:"


class MemoryLog(PartitionLog):
    def __init__(
        self, on_append: AppendHook = lambda log: None, clock: Callable[[], int] | None = None
    ) -> None:
        super().__init__(on_append)
        self._clock = clock  # the broker's, for segment.ms; None: rolls by segment.bytes only
        self._batches: list[bytes] = []
        self._base_offsets: list[int] = []
        self._last_offsets: list[int] = []
        # Running maximum of batch max timestamps: timestamp lookups bisect it.
        self._timestamp_ceiling: list[int] = []
        self._max_timestamps: list[int] = []
        self._end = 0
        self._start = 0
        # Bumped whenever batches already held change (not by appends): a compaction
        # pass spread over several steps checks it before swapping its result in.
        self._rewrites = 0
        self._aborted: list[AbortedTxn] = []
        # Segments as a disk log rolls them (segment.bytes, segment.ms), without files, so that
        # retention and compaction work in the same units as on disk: the base offset each one
        # starts at, the last one active; its bytes and when its first batch came.
        self._segment_bases: list[int] = [0]
        self._active_bytes = 0
        self._active_since: int | None = None

    @property
    def log_start_offset(self) -> int:
        return self._start

    @property
    def log_end_offset(self) -> int:
        return self._end

    def _write(self, batches: RecordBatches, now_ms: int | None = None) -> None:
        data = batches.data
        # A log without a clock rolls by size only; with one, `now_ms` is its time when given.
        now = None if self._clock is None else (self._clock() if now_ms is None else now_ms)
        if self._active_bytes and self._should_roll(len(data), now):
            self._roll(batches.headers[0].base_offset)
        self._active_bytes += len(data)
        if self._active_since is None:
            self._active_since = now
        for h in batches.headers:
            self._batches.append(data[h.position : h.end])
            self._base_offsets.append(h.base_offset)
            self._last_offsets.append(h.last_offset)
            self._max_timestamps.append(h.max_timestamp)
            ceiling = self._timestamp_ceiling[-1] if self._timestamp_ceiling else h.max_timestamp
            self._timestamp_ceiling.append(max(ceiling, h.max_timestamp))
        self._end = batches.last.last_offset + 1

    def _should_roll(self, incoming: int, now: int | None) -> bool:
        if self._active_bytes + incoming > self.config.segment_bytes:
            return True
        since = self._active_since
        return now is not None and since is not None and now - since >= self.config.roll_ms

    def _roll(self, base_offset: int) -> None:
        self._segment_bases.append(base_offset)
        self._active_bytes = 0
        self._active_since = None

    def _segments(self) -> list[tuple[int, int]]:
        """Each segment's batches, as (first, end) indexes into the columns, the active one last."""
        bounds = [bisect_left(self._base_offsets, base) for base in self._segment_bases[1:]]
        starts = [0, *bounds]
        return list(zip(starts, [*bounds, len(self._batches)], strict=True))

    def segment_extents(self) -> list[SegmentExtent]:
        """Each segment's offsets, bytes and timestamps, as the cleaner chooses by them
        (storage.cleaner_manager), the active one last."""
        extents = []
        for base, (first, end) in zip(self._segment_bases, self._segments(), strict=True):
            stamps = self._max_timestamps[first:end]
            next_offset = self._last_offsets[end - 1] + 1 if end > first else base
            size = sum(map(len, self._batches[first:end]))
            extents.append(
                SegmentExtent(base, next_offset, size, max(stamps, default=-1), stamps[0] if stamps else -1)
            )
        return extents

    def apply_retention(self, now_ms: int) -> int:
        """Drop leading segments past retention.ms / retention.bytes (delete policy), or emptied
        below the log start, as DiskLog.apply_retention deletes files: an expired active segment
        is rolled and goes too. Returns how many segments went."""
        config = self.config
        segments = self._segments()
        sizes = [sum(map(len, self._batches[first:end])) for first, end in segments]
        excess = sum(sizes) - config.retention_bytes
        count = 0
        for (first, end), size in zip(segments, sizes, strict=True):
            newest = max(self._max_timestamps[first:end], default=None)
            # A segment no batch gave a time (magic 0, a -1 header): on disk its file's last write
            # stands in (Segment.largest_timestamp); held here, it is not expired by time.
            expired = (
                config.deletes
                and config.retention_ms >= 0
                and newest is not None
                and newest >= 0
                and now_ms - newest > config.retention_ms
            )
            if count == len(segments) - 1:  # the active segment
                if expired:
                    self._roll(self._end)
                    count += 1
                break
            over = config.deletes and config.retention_bytes >= 0 and excess >= size
            if not (expired or over or size == 0):
                break
            excess -= size
            count += 1
        if count:
            del self._segment_bases[:count]
            self._drop_below(max(self._start, self._segment_bases[0]))
        return count

    def clean(self, now_ms: int) -> int:
        """Compact the segments below the first uncleanable offset, as the disk log's cleaner
        does (the same `compaction.first_uncleanable_offset`: the active segment, segments
        reaching the last stable offset or younger than min.compaction.lag.ms are left, and
        supersede nothing); returns how many batches remain below it."""
        from kafka_shim.storage import compaction  # the record codec loads only where topics compact

        spans = [
            compaction.SegmentSpan(
                base,
                self._last_offsets[end - 1] + 1 if end > first else base,
                max(self._max_timestamps[first:end], default=-1),
            )
            for base, (first, end) in zip(self._segment_bases, self._segments(), strict=True)
        ]
        config = self.config
        uncleanable = compaction.first_uncleanable_offset(
            spans,
            stable_offset=self.last_stable_offset,
            now_ms=now_ms,
            min_compaction_lag_ms=config.min_compaction_lag_ms,
        )
        if bisect_left(self._base_offsets, uncleanable) == 0:
            return 0
        for _ in self.compaction_steps(
            now_ms, config.delete_retention_ms, max(1, len(self._batches)), uncleanable
        ):
            pass
        return bisect_left(self._base_offsets, uncleanable)

    def _write_marker(self, batch: RecordBatches, aborted: AbortedTxn | None) -> None:
        self._write(batch)
        if aborted is not None:
            self._aborted.append(aborted)

    def aborted_ranges(self, start_offset: int, end_offset: int) -> list[AbortedTxn]:
        first = bisect_left(self._aborted, start_offset, key=lambda e: e.last_offset)
        return overlapping(islice(self._aborted, first, None), start_offset, end_offset)

    @property
    def batch_count(self) -> int:
        return len(self._batches)

    @property
    def size_in_bytes(self) -> int:
        with self._lock:
            return sum(map(len, self._batches))

    def _columns(self) -> tuple[list[Any], ...]:
        """The per-batch lists (batches, base and last offsets, max timestamps), all
        but the running ceiling, which is derived from the max timestamps."""
        return self._batches, self._base_offsets, self._last_offsets, self._max_timestamps

    def delete_records(self, offset: int) -> int:
        self._drop_below(self.records_deletion_target(offset))
        return self._start

    def _drop_below(self, start: int) -> None:
        """Move the log start to `start`, dropping the batches wholly below it."""
        self._start = start
        self._rewrites += 1
        # Drop whole batches below the new start; the one holding it stays.
        keep = bisect_left(self._last_offsets, self._start)
        for column in self._columns():
            del column[:keep]
        self._timestamp_ceiling = list(accumulate(self._max_timestamps, max))
        # Aborted transactions whose markers went with the dropped batches go too.
        self._aborted = (
            [e for e in self._aborted if e.last_offset >= self._base_offsets[0]] if self._base_offsets else []
        )

    def compact(self, now_ms: int, delete_retention_ms: int) -> int:
        """Log compaction (storage.compaction) over every batch, in one go.
        Returns how many batches remain."""
        for _ in self.compaction_steps(now_ms, delete_retention_ms, max(1, len(self._batches))):
            pass
        return len(self._batches)

    def compaction_steps(
        self, now_ms: int, delete_retention_ms: int, step_batches: int, round_end: int | None = None
    ) -> Iterator[None]:
        """One cleaning round (storage.compaction) over the batches below `round_end` (the
        first uncleanable offset; None: the last stable offset, an internal topic's writer
        cleaning everything it may), `step_batches` at a time: it yields after each step, so a
        caller can spread one round over many requests. Only those batches make the key map;
        offsets, log start and log end stay put.

        Appends may come between steps: the round covers the batches held when it
        started. Reads see the log as it was until the last step swaps the cleaned
        batches in. A round overtaken by DeleteRecords or another round is dropped."""
        from kafka_shim.storage import compaction  # the record codec loads only where topics compact

        rewrites = self._rewrites
        # Never at or after the last stable offset: an open transaction may yet abort.
        stable = self.last_stable_offset
        transactions = compaction.TransactionFilter(self.aborted_ranges(0, self._end), stable)
        end = stable if round_end is None else min(round_end, stable)
        held = self._batches[: bisect_left(self._base_offsets, end)]
        # Each batch is scanned once, for the key map and then to be cleaned: chunked,
        # the calls equal one over everything (later chunks override earlier ones in
        # the map, and batches are cleaned one by one).
        scanned = []
        latest: dict[bytes, int] = {}
        for start in range(0, len(held), step_batches):
            chunk = list(compaction.scan(held[start : start + step_batches]))
            compaction.add_latest_offsets(latest, chunk, transactions)
            scanned.append(chunk)
            yield
        producers = self.last_records_of_active_producers()
        round_ = compaction.CleanedTransactions(transactions)
        cleaned = MemoryLog()
        for chunk in scanned:
            kept = compaction.compact_scanned(
                chunk,
                latest,
                now_ms=now_ms,
                delete_retention_ms=delete_retention_ms,
                active_producers=producers,
                transactions=round_,
            )
            if kept:
                cleaned._write(RecordBatches.parse(kept, verify_crc=False))
            yield
        if self._rewrites != rewrites:
            return
        self._rewrites += 1
        for column, replacement in zip(self._columns(), cleaned._columns(), strict=True):
            column[: len(held)] = replacement
        self._timestamp_ceiling = list(accumulate(self._max_timestamps, max))
        # Aborted ranges whose transactions have no batch left go, as from a disk log's index.
        self._aborted = [e for e in self._aborted if e.last_offset not in round_.emptied_aborts]

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
        return first_record_at_or_after(self._batches[index], timestamp)

    def max_timestamp(self) -> TimestampOffset | None:
        if not self._batches:
            return None
        top = self._timestamp_ceiling[-1]
        index = bisect_left(self._timestamp_ceiling, top)  # the first batch reaching it
        return first_record_at_or_after(self._batches[index], top)
