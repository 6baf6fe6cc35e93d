"""Compaction of an internal topic kept in memory (`__consumer_offsets`,
`__transaction_state`): nothing else cleans it there, so its writer steps a pass along with
its appends.

A partition is compacted once it holds MIN_BATCHES batches and twice what survived its last
clean (amortised O(1) per append), STEP_BATCHES batches per append, so no request waits for
a whole pass (a step costs well under a millisecond; a pass over 100k batches, seconds).
"""

from __future__ import annotations

from collections.abc import Iterator

from kafka_shim.storage.memory import MemoryLog

MIN_BATCHES = 1_000
STEP_BATCHES = 100
_PASS_DONE = object()


class MemoryCompaction:
    """The passes under way over one topic's in-memory partitions."""

    def __init__(self) -> None:
        self._clean_at: dict[int, int] = {}  # partition -> batch count that starts its next pass
        self._cleaning: dict[int, Iterator[None]] = {}  # partition -> its pass under way

    def step(self, index: int, partition: MemoryLog, now_ms: int) -> None:
        """After an append to partition `index`: one step of its pass, started if it is due."""
        steps = self._cleaning.get(index)
        if steps is None:
            if partition.batch_count < self._clean_at.get(index, MIN_BATCHES):
                return
            # The topic's delete.retention.ms (or the broker's log.cleaner.delete.retention.ms).
            retention_ms = partition.config.delete_retention_ms
            steps = partition.compaction_steps(now_ms, retention_ms, STEP_BATCHES)
            self._cleaning[index] = steps
        if next(steps, _PASS_DONE) is _PASS_DONE:
            del self._cleaning[index]
            self._clean_at[index] = max(MIN_BATCHES, 2 * partition.batch_count)
