"""Cleaning of logs kept in memory (--memory).

An internal topic (`__consumer_offsets`, `__transaction_state`) is compacted by its writer, a
pass stepped along with its appends (MemoryCompaction), over every batch below the last
stable offset: there is no active segment to spare, since what the pass bounds is memory.
User topics are kept as a disk store's housekeeper keeps them: retention by time and size,
and compaction of closed segments with delete.retention.ms, every
log.retention.check.interval.ms of the broker's clock (`clean_user_topics`, which the broker
calls), and idle producers are forgotten (`expire_producers`, every
producer.id.expiration.check.interval.ms).

A partition is compacted once it holds MIN_BATCHES batches and twice what survived its last
clean (amortised O(1) per append), STEP_BATCHES batches per append, so no request waits for
a whole pass (a step costs well under a millisecond; a pass over 100k batches, seconds).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from kafka_shim.storage.memory import MemoryLog
from kafka_shim.storage.topics import Topic

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


def clean_user_topics(topics: Iterable[Topic], now_ms: int) -> None:
    """Retention, then compaction, of every user topic's in-memory partitions, by their configs
    (internal topics, whose names start with "__", are their writers' to compact)."""
    for topic in topics:
        if topic.name.startswith("__"):
            continue
        for partition in topic.partitions:
            if type(partition) is MemoryLog:
                partition.apply_retention(now_ms)
                if partition.config.compacts:
                    partition.clean(now_ms)


def expire_producers(topics: Iterable[Topic], now_ms: int, expiration_ms: int) -> None:
    """producer.id.expiration.ms over every in-memory partition, internal topics too (see
    ProducerStates.expire), as the disk store's housekeeper runs DiskLog.expire_producers."""
    for topic in topics:
        for partition in topic.partitions:
            if type(partition) is MemoryLog:
                partition.producers.expire(now_ms, expiration_ms)
