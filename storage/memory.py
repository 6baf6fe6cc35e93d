"""A partition log held in memory: the stored batches plus parallel indexes
(base and last offsets for bisecting, a running max timestamp) and the aborted
transactions."""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterator
from itertools import accumulate, islice
from typing import Any

from kafka_shim.protocol.records import RecordBatches
from kafka_shim.storage.log import AppendHook, PartitionLog, TimestampOffset
from kafka_shim.storage.txn_index import AbortedTxn, overlapping


class MemoryLog(PartitionLog):
    def __init__(self, on_append: AppendHook = lambda log: None) -> None:
        super().__init__(on_append)
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

    def _index_aborted(self, entry: AbortedTxn) -> None:
        self._aborted.append(entry)

    def aborted_ranges(self, start_offset: int, end_offset: int) -> list[AbortedTxn]:
        first = bisect_left(self._aborted, start_offset, key=lambda e: e.last_offset)
        return overlapping(islice(self._aborted, first, None), start_offset, end_offset)

    @property
    def batch_count(self) -> int:
        return len(self._batches)

    def _columns(self) -> tuple[list[Any], ...]:
        """The per-batch lists (batches, base and last offsets, max timestamps), all
        but the running ceiling, which is derived from the max timestamps."""
        return self._batches, self._base_offsets, self._last_offsets, self._max_timestamps

    def delete_records(self, offset: int) -> int:
        self._start = self.records_deletion_target(offset)
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
        return self._start

    def compact(self, now_ms: int, delete_retention_ms: int) -> int:
        """Log compaction (storage.compaction) over every batch, in one go.
        Returns how many batches remain."""
        for _ in self.compaction_steps(now_ms, delete_retention_ms, max(1, len(self._batches))):
            pass
        return len(self._batches)

    def compaction_steps(self, now_ms: int, delete_retention_ms: int, step_batches: int) -> Iterator[None]:
        """Log compaction (storage.compaction) of the batches held now, `step_batches`
        at a time: it yields after each step, so a caller can spread one pass over
        many requests. Memory has no segments, so nothing is spared as active;
        offsets, log start and log end stay put.

        Appends may come between steps: the pass covers the batches held when it
        started (what comes later is left for the next pass, as an active segment
        is). Reads see the log as it was until the last step swaps the cleaned
        batches in. A pass overtaken by DeleteRecords or another pass is dropped."""
        from kafka_shim.storage import compaction  # the record codec loads only where topics compact

        rewrites = self._rewrites
        # Only below the last stable offset: an open transaction may yet abort.
        transactions = compaction.TransactionFilter(
            self.aborted_ranges(0, self._end), self.last_stable_offset
        )
        held = self._batches[: bisect_left(self._base_offsets, transactions.stable_offset)]
        # Each batch is scanned once, for the key map and then to be cleaned: chunked,
        # the calls equal one over everything (later chunks override earlier ones in
        # the maps, and batches are cleaned one by one).
        scanned = []
        latest: dict[bytes, int] = {}
        producers: dict[int, int] = {}
        for start in range(0, len(held), step_batches):
            chunk = list(compaction.scan(held[start : start + step_batches]))
            compaction.add_latest_offsets(latest, chunk, transactions)
            compaction.add_producer_last_offsets(producers, (batch.header for batch in chunk))
            scanned.append(chunk)
            yield
        cleaned = MemoryLog()
        for chunk in scanned:
            kept = compaction.compact_scanned(
                chunk,
                latest,
                now_ms=now_ms,
                delete_retention_ms=delete_retention_ms,
                producer_last_offsets=producers,
                transactions=transactions,
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
