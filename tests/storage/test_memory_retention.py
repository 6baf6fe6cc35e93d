"""--memory keeps user topics as a disk log does: the same appends, configs and clock give a
MemoryLog and a DiskLog the same log start, records and end after retention and compaction."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from kafka_shim.protocol.records import RecordBatches
from kafka_shim.storage.cleaner import clean
from kafka_shim.storage.log import PartitionLog
from kafka_shim.storage.log_config import LogConfig
from kafka_shim.storage.memory import MemoryLog
from kafka_shim.storage.memory_compaction import retain_user_topics
from kafka_shim.storage.topics import TopicStore
from tests.batches import batch, make_batch, read_records
from tests.helpers import FakeClock
from tests.storage.logs import disk_log, options

ONE = len(batch(b"v" * 20, key=b"k").data)  # one batch's bytes
COMPACT = frozenset({"compact"})
BOTH = frozenset({"compact", "delete"})

# (name, configs, appends as (clock step ms, timestamp, key, value), retention at (step ms))
CASES: list[tuple[str, dict[str, Any], list[tuple[int, int, bytes, bytes]], int]] = [
    (
        "time: old segments go, the active one stays",
        {"segment_bytes": ONE, "retention_ms": 5_000},
        [(0, 1_000, b"a", b"1"), (0, 2_000, b"b", b"2"), (0, 9_000, b"c", b"3")],
        10_000,
    ),
    (
        "time: an expired active segment is rolled and goes too",
        {"segment_bytes": ONE * 10, "retention_ms": 5_000},
        [(0, 1_000, b"a", b"1"), (0, 1_500, b"b", b"2")],
        10_000,
    ),
    (
        "size: the newest segments within retention.bytes stay",
        {"segment_bytes": ONE, "retention_bytes": 2 * ONE, "retention_ms": -1},
        [(0, t, b"k%d" % t, b"v") for t in range(5)],
        0,
    ),
    (
        "records without a time (magic 0, a -1 batch header as sarama 1.22 writes) are not taken "
        "for 1970's: kept by time",
        {"segment_bytes": ONE, "retention_ms": 5_000},
        [(0, -1, b"a", b"1"), (0, -1, b"b", b"2"), (0, -1, b"c", b"3")],
        10_000,
    ),
    (
        "segment.ms rolls by the clock",
        {"segment_ms": 1_000, "retention_ms": 5_000},
        [(0, 1_000, b"a", b"1"), (1_500, 1_000, b"b", b"2"), (1_500, 9_000, b"c", b"3")],
        10_000,
    ),
    (
        "compact only: retention deletes nothing",
        {"segment_bytes": ONE, "retention_ms": 0, "retention_bytes": 0, "cleanup_policy": COMPACT},
        [(0, 1_000, b"a", b"1"), (0, 1_000, b"a", b"2"), (0, 1_000, b"b", b"3")],
        10_000,
    ),
    (
        "compaction keeps each key's latest, the active segment untouched",
        {"segment_bytes": ONE, "cleanup_policy": COMPACT},
        [(0, 1_000, b"a", b"1"), (0, 1_000, b"b", b"2"), (0, 1_000, b"a", b"3"), (0, 1_000, b"a", b"4")],
        0,
    ),
    (
        "compact,delete: both",
        {"segment_bytes": ONE, "retention_ms": 5_000, "cleanup_policy": BOTH},
        [(0, 1_000, b"a", b"1"), (0, 9_000, b"b", b"2"), (0, 9_000, b"b", b"3"), (0, 9_500, b"c", b"4")],
        10_000,
    ),
    (
        "min.compaction.lag.ms spares the young segments",
        {"segment_bytes": ONE, "cleanup_policy": COMPACT, "min_compaction_lag_ms": 60_000},
        [(0, 1_000, b"a", b"1"), (0, 1_000, b"a", b"2"), (0, 1_000, b"a", b"3")],
        10_000,
    ),
]


def _state(log: PartitionLog) -> tuple[int, int, list[tuple[int, int, bytes | None]]]:
    return log.log_start_offset, log.log_end_offset, read_records(log.read(log.log_start_offset, 1 << 20))


@pytest.mark.parametrize(("configs", "appends", "later"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_memory_retention_and_compaction_match_the_disk_log(
    tmp_path: Path, configs: dict[str, Any], appends: list[tuple[int, int, bytes, bytes]], later: int
) -> None:
    clock = FakeClock(now=1_000)
    disk = disk_log(tmp_path / "t-0", options(clock), **configs)
    memory = MemoryLog(clock=clock)
    memory.configure(LogConfig(**configs))
    for step, timestamp, key, value in appends:
        clock.now += step
        for log in (disk, memory):
            log.append(batch(value, key=key, base_timestamp=timestamp))
    clock.now += later
    assert memory.apply_retention(clock.now) == disk.apply_retention(clock.now)
    if disk.config.compacts:
        clean(disk, clock.now)
        memory.clean(clock.now)
    assert _state(memory) == _state(disk)


def test_tombstones_go_after_delete_retention_ms() -> None:
    clock = FakeClock(now=1_000)
    memory = MemoryLog(clock=clock)
    memory.configure(LogConfig(segment_bytes=1, cleanup_policy=COMPACT, delete_retention_ms=5_000))
    memory.append(batch(b"1", key=b"a"))
    memory.append(RecordBatches.parse(make_batch([None], key=b"a")))  # type: ignore[list-item]
    memory.append(batch(b"x", key=b"b"))
    memory.clean(clock.now)  # the tombstone stays for delete.retention.ms
    assert [value for _, _, value in read_records(memory.read(0, 1 << 20))] == [None, b"x"]
    clock.now += 10_000
    memory.clean(clock.now)
    assert [value for _, _, value in read_records(memory.read(0, 1 << 20))] == [b"x"]


def test_retain_user_topics_leaves_internal_topics_to_their_writers() -> None:
    clock = FakeClock(now=1_000)
    store = TopicStore(lambda topic, partition: MemoryLog(clock=clock))
    store.create("events", 1, {"retention.ms": "1000", "segment.bytes": str(ONE)})
    store.create("__internal", 1, {"retention.ms": "1000", "segment.bytes": str(ONE)})
    for name in ("events", "__internal"):
        log = store.partition(name, 0)
        assert log is not None
        log.append(batch(b"1", base_timestamp=1_000))
        log.append(batch(b"2", base_timestamp=1_000))
    retain_user_topics(store, 60_000)
    starts = {name: store.partition(name, 0).log_start_offset for name in ("events", "__internal")}  # type: ignore[union-attr]
    assert starts == {"events": 2, "__internal": 0}
