"""The disk log beyond the shared contract: segment files and their names,
rolling by size and time, sparse index lookups, retention, restarts."""

from __future__ import annotations

import os
import struct
import time
from pathlib import Path

import pytest

from kafka_shim.protocol.record_codec import build_keyed_batch
from kafka_shim.protocol.records import iter_headers
from kafka_shim.storage.disk_log import DiskLog
from kafka_shim.storage.errors import StorageError
from kafka_shim.storage.faults import FAULTS
from kafka_shim.storage.segment import INDEX_SUFFIX, LOG_SUFFIX, TIME_INDEX_SUFFIX
from tests.batches import batch, read_records
from tests.helpers import FakeClock
from tests.storage.logs import disk_log, options, reopen


def offsets(log: DiskLog, start: int = -1) -> list[int]:
    start = log.log_start_offset if start < 0 else start
    return [o for o, _, _ in read_records(log.read(start, 1 << 30))]


def segment_files(directory: Path, suffix: str = LOG_SUFFIX) -> list[str]:
    return sorted(p.name for p in directory.glob("*" + suffix))


def test_segments_are_named_by_20_digit_base_offsets_and_roll_by_size(tmp_path: Path) -> None:
    one = len(batch(b"x" * 50).data)
    log = disk_log(tmp_path / "t-0", segment_bytes=2 * one)
    for _ in range(5):
        log.append(batch(b"x" * 50))
    assert segment_files(log.directory) == [
        "00000000000000000000.log",
        "00000000000000000002.log",
        "00000000000000000004.log",
    ]
    assert [(tmp_path / "t-0" / n).stat().st_size for n in segment_files(log.directory)] == [
        2 * one,
        2 * one,
        one,
    ]
    assert offsets(log) == [0, 1, 2, 3, 4]


def test_segments_roll_by_time_since_their_first_append(tmp_path: Path) -> None:
    clock = FakeClock(10_000)
    log = disk_log(tmp_path / "t-0", options(clock), segment_ms=1000)
    log.append(batch(b"a", base_timestamp=1))  # record timestamps play no part
    clock.now = 10_999
    log.append(batch(b"b", base_timestamp=1))
    assert len(segment_files(log.directory)) == 1
    clock.now = 11_000
    log.append(batch(b"c", base_timestamp=1))
    assert segment_files(log.directory)[-1] == "00000000000000000002.log"


def test_a_batch_the_broker_built_is_written_as_built_and_rolls_by_the_time_it_brings(
    tmp_path: Path,
) -> None:
    """append_placed (an offset commit's batch): written at the log end as built, the segment.ms
    check made at the caller's time, not the log's clock; a batch built for another offset or
    leader epoch is refused and nothing of it written."""
    clock = FakeClock(10_000)
    log = disk_log(tmp_path / "t-0", options(clock), segment_ms=1000)
    first = build_keyed_batch([(b"k", b"v1")], 0, 1, partition_leader_epoch=log.leader_epoch)
    log.append_placed(first, 10_000)
    assert log.read(0, 1 << 20) == first.data
    for wrong in (
        build_keyed_batch([(b"k", b"v2")], 0, 1, partition_leader_epoch=log.leader_epoch),  # offset 0 again
        build_keyed_batch([(b"k", b"v2")], 1, 1, partition_leader_epoch=log.leader_epoch + 1),
    ):
        with pytest.raises(ValueError, match="not built at the log end 1"):
            log.append_placed(wrong, 10_000)
    assert log.log_end_offset == 1
    second = build_keyed_batch([(b"k", b"v2")], 1, 1, partition_leader_epoch=log.leader_epoch)
    log.append_placed(second, 11_000)  # the log's own clock still reads 10,000
    assert segment_files(log.directory)[-1] == "00000000000000000001.log"
    assert offsets(log) == [0, 1]


def test_sparse_index_in_kafka_layout_finds_every_offset(tmp_path: Path) -> None:
    log = disk_log(tmp_path / "t-0", index_interval_bytes=300)
    for n in range(40):
        log.append(batch(b"v" * 40, b"w" * 40, base_timestamp=1000 + n))
    index = (tmp_path / "t-0" / ("0" * 20 + INDEX_SUFFIX)).read_bytes()
    entries = list(struct.iter_unpack(">ii", index))
    assert 5 < len(entries) < 40  # sparse
    for relative, position in entries:  # each points at the batch whose last offset it names
        base, _length = struct.unpack_from(">qi", log.read(0, 1 << 30), position)
        assert base + 1 == relative
    time_entries = list(
        struct.iter_unpack(">qi", (tmp_path / "t-0" / ("0" * 20 + TIME_INDEX_SUFFIX)).read_bytes())
    )
    assert [t for t, _ in time_entries] == sorted({t for t, _ in time_entries})
    for offset in range(80):
        assert read_records(log.read(offset, 1))[0][0] == offset - offset % 2
    # Timestamps: batch n holds 1000+n and 1001+n; 1020 is first held by batch 19's second record.
    found = log.offset_for_timestamp(1020)
    assert found is not None and (found.timestamp, found.offset) == (1020, 39)


def test_retention_by_time_deletes_old_segments_and_moves_the_start(tmp_path: Path) -> None:
    clock = FakeClock(100_000)
    one = len(batch(b"x").data)
    log = disk_log(tmp_path / "t-0", options(clock), segment_bytes=one, retention_ms=5_000)
    for ts in (90_000, 94_000, 99_000):
        log.append(batch(b"x", base_timestamp=ts))
    assert log.apply_retention() == 2  # the active segment (ts 99000) stays
    assert (log.log_start_offset, log.log_end_offset) == (2, 3)
    assert segment_files(log.directory) == ["00000000000000000002.log"]
    assert offsets(log) == [2]
    clock.now = 200_000
    assert log.apply_retention() == 1  # an expired active segment is rolled, then deleted
    assert (log.log_start_offset, log.log_end_offset) == (3, 3)
    assert log.read(3, 100) == b""


def test_a_segment_without_record_times_expires_by_its_files_last_write(tmp_path: Path) -> None:
    """Kafka's LogSegment.largestTimestamp: with no record time (magic 0, a -1 batch header) the
    log file's modification time is what retention.ms measures, not -1."""
    now = int(time.time() * 1000)
    one = len(batch(b"x").data)
    log = disk_log(tmp_path / "t-0", options(FakeClock(now)), segment_bytes=one, retention_ms=86_400_000)
    for _ in range(3):
        log.append(batch(b"x", base_timestamp=-1))
    assert log.apply_retention(now) == 0
    two_days_ago = time.time() - 2 * 86_400
    first = tmp_path / "t-0" / segment_files(log.directory)[0]
    os.utime(first, (two_days_ago, two_days_ago))
    assert log.apply_retention(now) == 1
    assert log.log_start_offset == 1


def test_retention_by_bytes_keeps_the_newest_segments(tmp_path: Path) -> None:
    one = len(batch(b"x").data)
    log = disk_log(tmp_path / "t-0", segment_bytes=one, retention_bytes=2 * one, retention_ms=-1)
    for _ in range(5):
        log.append(batch(b"x"))
    assert log.apply_retention() == 3
    assert log.log_start_offset == 3
    assert offsets(log) == [3, 4]


def test_compact_only_topics_are_not_deleted_by_retention(tmp_path: Path) -> None:
    one = len(batch(b"x").data)
    log = disk_log(
        tmp_path / "t-0",
        segment_bytes=one,
        retention_bytes=0,
        retention_ms=0,
        cleanup_policy=frozenset({"compact"}),
    )
    for _ in range(3):
        log.append(batch(b"x"))
    assert log.apply_retention() == 0
    assert offsets(log) == [0, 1, 2]


def test_delete_records_start_survives_a_restart_and_drops_whole_segments(tmp_path: Path) -> None:
    one = len(batch(b"x").data)
    log = disk_log(tmp_path / "t-0", segment_bytes=one)
    for _ in range(4):
        log.append(batch(b"x"))
    assert log.delete_records(2) == 2
    assert segment_files(log.directory)[0] == "00000000000000000002.log"
    log.delete_records(3)
    log = reopen(log, clean=True)
    assert log.log_start_offset == 3
    assert offsets(log) == [3]


def test_restart_clean_and_unclean_gives_everything_back(tmp_path: Path) -> None:
    one = len(batch(b"x").data)
    log = disk_log(tmp_path / "t-0", segment_bytes=3 * one, index_interval_bytes=1)
    for n in range(10):
        log.append(batch(b"x", base_timestamp=n))
    for end, clean in ((10, True), (11, False)):
        log = reopen(log, clean=clean)
        assert (log.log_start_offset, log.log_end_offset) == (0, end)
        assert offsets(log) == list(range(end))
        assert log.max_timestamp() is not None and log.max_timestamp().offset == 9  # type: ignore[union-attr]
        found = log.offset_for_timestamp(5)
        assert found is not None and found.offset == 5
        assert log.append(batch(b"y", base_timestamp=0)).base_offset == end


def test_missing_or_torn_indexes_are_rebuilt(tmp_path: Path) -> None:
    one = len(batch(b"x").data)
    log = disk_log(tmp_path / "t-0", segment_bytes=2 * one, index_interval_bytes=1)
    for _ in range(5):
        log.append(batch(b"x"))
    log.close()
    (log.directory / ("0" * 20 + INDEX_SUFFIX)).unlink()
    with open(log.directory / ("0" * 19 + "2" + INDEX_SUFFIX), "ab") as torn:
        torn.write(b"\x00\x01\x02")
    again = DiskLog.open(log.directory, log.config, log.options, clean=True)
    assert offsets(again) == [0, 1, 2, 3, 4]
    assert (log.directory / ("0" * 20 + INDEX_SUFFIX)).stat().st_size == 8 * 2


def test_segment_spans_give_listoffsets_v0_each_segment_s_base_and_file_time(tmp_path: Path) -> None:
    one = len(batch(b"x" * 50).data)
    log = disk_log(tmp_path / "t-0", segment_bytes=2 * one)
    for _ in range(5):
        log.append(batch(b"x" * 50))
    log.delete_records(1)
    spans = log.segment_spans(now_ms=0)
    mtimes = [(log.directory / name).stat().st_mtime_ns // 1_000_000 for name in segment_files(log.directory)]
    assert [(s.base_offset, s.empty, s.last_modified_ms) for s in spans] == [
        (1, False, mtimes[0]),  # never below the log start
        (2, False, mtimes[1]),
        (4, False, mtimes[2]),
    ]
    log.roll()
    assert log.segment_spans(now_ms=0)[-1][:2] == (5, True)


def test_leader_epochs_survive_a_restart_in_kafkas_checkpoint_format(tmp_path: Path) -> None:
    log = disk_log(tmp_path / "t-0")
    log.append(batch(b"a"))
    log.begin_leader_epoch(3)
    log.append(batch(b"b"))
    assert (log.directory / "leader-epoch-checkpoint").read_text() == "0\n2\n0 0\n3 1\n"
    for clean in (True, False):
        log = reopen(log, clean=clean)
        assert log.epoch_starts == [(0, 0), (3, 1)]
        assert log.end_offset_for_epoch(0) == (0, 1)


def test_an_unreadable_epoch_checkpoint_is_ignored(tmp_path: Path) -> None:
    log = disk_log(tmp_path / "t-0")
    log.append(batch(b"a"))
    (log.directory / "leader-epoch-checkpoint").write_text("0\n5\n1 0\n")  # five announced, one there
    assert reopen(log, clean=True).epoch_starts == [(0, 0)]


def test_reads_served_from_the_active_segments_tail_copy_match_the_file(tmp_path: Path) -> None:
    """The active segment keeps a copy of its newest bytes (segment.TAIL_BYTES) and serves
    reads inside it without a pread: whatever is read, from the copy, the file or across
    both, is the file's bytes, also after a write that failed and was cut off."""
    log = disk_log(tmp_path / "t-0", index_interval_bytes=1)  # fsync on every append
    values = [bytes([i]) * (1000 + 37 * i) for i in range(40)]  # 40+ KiB: more than the copy holds
    for value in values[:20]:
        log.append(batch(value))
    FAULTS.arm("fsync")  # the batch is written and copied, then cut off
    with pytest.raises(StorageError):
        log.append(batch(b"never"))
    FAULTS.clear()
    assert log.read(0, 1 << 30) == log.active.log_path.read_bytes()
    for value in values[20:]:
        log.append(batch(value))
    with open(log.active.log_path, "rb") as file:
        on_disk = file.read()
    for offset in range(len(values)):
        for max_bytes in (1, 5000, 1 << 20):
            served = log.read(offset, max_bytes)
            assert served and on_disk.find(served) >= 0
            assert next(v for _, _, v in read_records(served)) == values[offset]
    assert log.read(0, 1 << 30) == on_disk
    assert [v for _, _, v in read_records(on_disk)] == values


def test_batch_positions_read_from_the_tail_copy_and_the_file_are_the_headers(tmp_path: Path) -> None:
    """A segment reads a batch's position with a narrow struct of four header fields (f7ec251):
    from the tail copy and from the file (the batches before it), they are what the full
    header says, the maximum timestamp too (offsets by time read it)."""
    log = disk_log(tmp_path / "t-0")
    for i in range(40):  # 40+ KiB: the first batches are beyond the tail copy
        pairs = [(None, bytes([i]) * 1000)] * (1 + i % 3)
        log.append(build_keyed_batch(pairs, 0, 1_700_000_000_000 + 7 * i))
    on_disk = log.active.log_path.read_bytes()
    expected = [
        (h.position, h.base_offset, h.last_offset, h.size, h.max_timestamp) for h in iter_headers(on_disk)
    ]
    assert [tuple(p) for p in log.active.batches_from()] == expected
    assert len(expected) == 40
