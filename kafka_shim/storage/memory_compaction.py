"""Cleaning of logs kept in memory (--memory).

An internal topic (`__consumer_offsets`, `__transaction_state`) is compacted by its writer, a
pass stepped along with its appends (MemoryCompaction), over every batch below the last
stable offset: there is no active segment to spare, since what the pass bounds is memory.
User topics are kept as a disk store's housekeeper keeps them, on the broker's clock (the
broker calls these): retention by time and size every log.retention.check.interval.ms
(`retain_user_topics`), the cleaner every log.cleaner.backoff.ms (`clean_user_topics`: the
compacted partitions storage.cleaner_manager finds dirty enough, the filthiest first), and
idle producers are forgotten (`expire_producers`, every producer.id.expiration.check.interval.ms).

A partition is compacted once it holds MIN_BATCHES batches and twice what survived its last
clean (amortised O(1) per append), STEP_BATCHES batches per append, so no request waits for
a whole pass (a step costs well under a millisecond; a pass over 100k batches, seconds).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from kafka_shim.storage.cleaner_manager import Cleanable, CleanerCheckpoints, cleanable
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


def _user_partitions(topics: Iterable[Topic]) -> Iterator[MemoryLog]:
    """Every user topic's in-memory partition (internal topics, whose names start with "__",
    are their writers' to compact and keep)."""
    for topic in topics:
        if not topic.name.startswith("__"):
            yield from (p for p in topic.partitions if type(p) is MemoryLog)


def retain_user_topics(topics: Iterable[Topic], now_ms: int) -> None:
    """Retention of every user topic's in-memory partitions, by their configs."""
    for partition in _user_partitions(topics):
        partition.apply_retention(now_ms)


def clean_user_topics(topics: Iterable[Topic], now_ms: int, checkpoints: CleanerCheckpoints) -> None:
    """One wake of the cleaner over the user topics' compacted in-memory partitions: those
    dirty enough, the filthiest first."""
    due: list[tuple[Cleanable, MemoryLog]] = []
    for partition in _user_partitions(topics):
        if partition.config.compacts:
            found = cleanable(
                partition.segment_extents(),
                checkpoints.first_dirty(partition),
                stable_offset=partition.last_stable_offset,
                config=partition.config,
                now_ms=now_ms,
            )
            if found is not None:
                due.append((found, partition))
    due.sort(key=lambda item: item[0].ratio, reverse=True)
    for taken, partition in due:
        partition.clean(now_ms)
        checkpoints.cleaned_to(partition, taken.uncleanable)


def expire_producers(topics: Iterable[Topic], now_ms: int, expiration_ms: int) -> None:
    """producer.id.expiration.ms over every in-memory partition, internal topics too (see
    ProducerStates.expire), as the disk store's housekeeper runs DiskLog.expire_producers."""
    for topic in topics:
        for partition in topic.partitions:
            if type(partition) is MemoryLog:
                partition.producers.expire(now_ms, expiration_ms)
