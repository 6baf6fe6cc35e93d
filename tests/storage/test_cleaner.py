"""Compaction of a disk log: part B's `storage.compaction` over closed
segments, swapped in by `DiskLog.replace_segments`; offsets are kept."""

from __future__ import annotations

from pathlib import Path

from kafka_shim.storage.cleaner import clean
from kafka_shim.storage.disk_log import DiskLog
from tests.batches import batch, read_records
from tests.storage.logs import disk_log, reopen


def keyed(log: DiskLog, key: bytes, value: bytes) -> None:
    log.append(batch(value, key=key, base_timestamp=1_000))


def test_closed_segments_keep_the_newest_record_per_key_at_its_offset(tmp_path: Path) -> None:
    one = len(batch(b"v0", key=b"a").data)
    log = disk_log(tmp_path / "t-0", segment_bytes=2 * one, cleanup_policy=frozenset({"compact"}))
    for number, key in enumerate([b"a", b"b", b"a", b"c", b"a", b"b", b"c"]):
        keyed(log, key, b"v%d" % number)
    # Segments [0,1] [2,3] [4,5] closed, [6] active. Kafka's LogCleaner.buildOffsetMap maps
    # only the segments below the first uncleanable offset (the active segment's base), so
    # c=v3, superseded only by c=v6 in the active segment, stays.
    assert clean(log, now_ms=10_000) == 3
    survivors = [(o, v) for o, _, v in read_records(log.read(0, 1 << 20))]
    assert survivors == [(3, b"v3"), (4, b"v4"), (5, b"v5"), (6, b"v6")]
    assert log.log_end_offset == 7 and log.log_start_offset == 0
    assert [(o, v) for o, _, v in read_records(reopen(log, clean=False).read(0, 1 << 20))] == survivors


def test_min_compaction_lag_spares_young_segments(tmp_path: Path) -> None:
    one = len(batch(b"v0", key=b"a").data)
    log = disk_log(
        tmp_path / "t-0",
        segment_bytes=one,
        cleanup_policy=frozenset({"compact"}),
        min_compaction_lag_ms=5_000,
    )
    for number in range(3):
        keyed(log, b"a", b"v%d" % number)
    assert clean(log, now_ms=5_999) == 0
    assert clean(log, now_ms=6_000) == 2
