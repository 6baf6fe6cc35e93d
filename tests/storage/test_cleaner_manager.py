"""Which compacted logs the cleaner takes at a wake (Kafka's LogCleanerManager): the dirty
ratio past the checkpoint against min.cleanable.dirty.ratio, max.compaction.lag.ms, and the
roll that brings a compacted log's records to a closed segment in time; on the fake clock,
through MemoryLog and the broker's cleaner wake (storage.memory_compaction)."""

from __future__ import annotations

from typing import Any

import pytest

from kafka_shim.storage.cleaner_manager import CleanerCheckpoints, SegmentExtent, cleanable
from kafka_shim.storage.log_config import LogConfig
from kafka_shim.storage.memory import MemoryLog
from kafka_shim.storage.memory_compaction import clean_user_topics
from kafka_shim.storage.topics import TopicStore
from tests.batches import batch, read_records
from tests.helpers import FakeClock

NOW = 1_000_000
COMPACT = frozenset({"compact"})
LONG_MAX = 2**63 - 1


def seg(base: int, end: int, size: int, first: int = NOW - 1_000, newest: int = NOW - 1_000) -> SegmentExtent:
    return SegmentExtent(base, end, size, newest, first)


# (name, segments (the last active), first dirty offset, configs, the uncleanable offset if taken)
CASES: list[tuple[str, list[SegmentExtent], int, dict[str, Any], int | None]] = [
    ("never cleaned, ratio 1 > 0.5", [seg(0, 10, 100), seg(10, 20, 100)], 0, {}, 10),
    ("only the active segment is dirty", [seg(0, 10, 100), seg(10, 20, 100)], 10, {}, None),
    ("dirty 100 of 300 = 0.33 < 0.5", [seg(0, 10, 200), seg(10, 20, 100), seg(20, 30, 1)], 10, {}, None),
    (
        "dirty 100 of 300 > min.cleanable.dirty.ratio 0.01",
        [seg(0, 10, 200), seg(10, 20, 100), seg(20, 30, 1)],
        10,
        {"min_cleanable_dirty_ratio": 0.01},
        20,
    ),
    (
        "ratio low but max.compaction.lag.ms passed",
        [seg(0, 10, 900), seg(10, 20, 10, first=NOW - 60_000), seg(20, 30, 1)],
        10,
        {"max_compaction_lag_ms": 30_000},
        20,
    ),
    (
        "max.compaction.lag.ms not reached yet",
        [seg(0, 10, 900), seg(10, 20, 10, first=NOW - 10_000), seg(20, 30, 1)],
        10,
        {"max_compaction_lag_ms": 30_000},
        None,
    ),
    (
        "min.compaction.lag.ms keeps a young dirty segment out",
        [seg(0, 10, 100, newest=NOW - 100), seg(10, 20, 100)],
        0,
        {"min_compaction_lag_ms": 60_000},
        None,
    ),
]


@pytest.mark.parametrize(
    ("segments", "first_dirty", "configs", "taken"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_which_logs_the_cleaner_takes(
    segments: list[SegmentExtent], first_dirty: int, configs: dict[str, Any], taken: int | None
) -> None:
    config = LogConfig(cleanup_policy=COMPACT, **configs)
    found = cleanable(
        segments, first_dirty, stable_offset=segments[-1].next_offset, config=config, now_ms=NOW
    )
    assert (found and found.uncleanable) == taken


def test_librdkafka_0077_topic_is_cleaned_at_the_next_wake() -> None:
    """librdkafka's 0077 compaction topic (small segments, segment.ms, dirty ratio 0.01):
    the first cleaner wake after the records reach closed segments compacts them; a wake with
    nothing new written since does not clean again (the checkpoint)."""
    clock = FakeClock(now=NOW)
    store = TopicStore(lambda topic, partition: MemoryLog(clock=clock))
    configs = {"cleanup.policy": "compact", "segment.bytes": "600", "segment.ms": "10000"}
    store.create("compacted", 1, {**configs, "min.cleanable.dirty.ratio": "0.01"})
    log = store.partition("compacted", 0)
    assert isinstance(log, MemoryLog)
    for i in range(40):
        log.append(batch(b"v%d" % i, key=b"k%d" % (i % 4)))
    clock.now += 10_000
    log.append(batch(b"last", key=b"other"))  # past segment.ms: rolls, everything before is closed
    checkpoints = CleanerCheckpoints()
    clean_user_topics(store, clock.now, checkpoints)
    values = [value for _, _, value in read_records(log.read(0, 1 << 20))]
    assert values == [b"v36", b"v37", b"v38", b"v39", b"last"]
    assert checkpoints.first_dirty(log) == 40
    rewrites = log._rewrites
    clean_user_topics(store, clock.now + 15_000, checkpoints)
    assert log._rewrites == rewrites  # not dirty: left alone


def test_a_compacted_log_rolls_at_max_compaction_lag_ms() -> None:
    """Kafka's maxSegmentMs: for a compacted log, max.compaction.lag.ms below segment.ms rolls
    the active segment at the next append once it has passed."""
    clock = FakeClock(now=NOW)
    log = MemoryLog(clock=clock)
    log.configure(LogConfig(cleanup_policy=COMPACT, max_compaction_lag_ms=5_000))
    log.append(batch(b"1", key=b"a"))
    clock.now += 5_000
    log.append(batch(b"2", key=b"a"))
    assert [s.base_offset for s in log.segment_extents()] == [0, 1]
    assert LogConfig(max_compaction_lag_ms=5_000).roll_ms == LogConfig().segment_ms  # delete policy
