"""Recovery after a crash: torn tails are cut with one log line, corruption
with valid data after it stops the start (unless --truncate-corrupt)."""

from __future__ import annotations

import logging
import os
from pathlib import Path

import pytest

from kafka_shim.storage.disk_log import DiskLog
from kafka_shim.storage.errors import CorruptLog
from tests.batches import batch, read_records
from tests.storage.logs import disk_log, options, reopen

ACTIVE = "0" * 20 + ".log"


def three_batches(directory: Path) -> tuple[DiskLog, list[int]]:
    """A log of three batches; returns it and the byte position of each."""
    log = disk_log(directory)
    positions = []
    for values in ((b"a", b"b"), (b"c",), (b"d", b"e", b"f")):
        positions.append(log.active.size)
        log.append(batch(*values))
    return log, positions


def values(log: DiskLog) -> list[bytes | None]:
    return [v for _, _, v in read_records(log.read(log.log_start_offset, 1 << 20))]


def test_a_tail_torn_at_any_byte_is_truncated_and_nothing_before_is_lost(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    log, positions = three_batches(tmp_path / "t-0")
    log.close()
    path = log.directory / ACTIVE
    whole = path.read_bytes()
    for cut in range(positions[2] + 1, len(whole)):
        path.write_bytes(whole[:cut])
        caplog.clear()
        with caplog.at_level(logging.WARNING, "kafka_shim.storage"):
            again = DiskLog.open(log.directory, log.config, log.options, clean=False)
        assert values(again) == [b"a", b"b", b"c"], cut
        assert again.log_end_offset == 3
        assert path.stat().st_size == positions[2]
        [line] = [r.getMessage() for r in caplog.records]
        assert f"truncated torn tail of {path} at byte {positions[2]} (offset 3)" in line
        # The next append continues where valid data ended.
        assert again.append(batch(b"g")).base_offset == 3
        again.close()


def test_a_corrupt_tail_batch_is_truncated(tmp_path: Path) -> None:
    log, _positions = three_batches(tmp_path / "t-0")
    log.close()
    path = log.directory / ACTIVE
    data = bytearray(path.read_bytes())
    data[-1] ^= 0xFF  # inside the last batch's CRC-covered records
    path.write_bytes(bytes(data))
    again = DiskLog.open(log.directory, log.config, log.options, clean=False)
    assert values(again) == [b"a", b"b", b"c"]


@pytest.mark.parametrize("flip", [30, 10])  # a record byte (CRC mismatch), the batch length
def test_corruption_in_the_middle_refuses_to_start(tmp_path: Path, flip: int) -> None:
    log, positions = three_batches(tmp_path / "t-0")
    log.close()
    path = log.directory / ACTIVE
    data = bytearray(path.read_bytes())
    data[positions[1] + flip] ^= 0x40
    path.write_bytes(bytes(data))
    with pytest.raises(CorruptLog) as info:
        DiskLog.open(log.directory, log.config, log.options, clean=False)
    message = str(info.value)
    assert f"corrupt record batch in {path} at byte {positions[1]} (offset 2)" in message
    assert "--truncate-corrupt" in message
    assert path.read_bytes() == bytes(data)  # nothing touched

    lenient = DiskLog.open(log.directory, log.config, options(truncate_corrupt=True), clean=False)
    assert values(lenient) == [b"a", b"b"]
    assert lenient.log_end_offset == 2


def test_corruption_in_a_closed_segment_refuses_to_start(tmp_path: Path) -> None:
    one = len(batch(b"x").data)
    log = disk_log(tmp_path / "t-0", segment_bytes=2 * one)
    for _ in range(5):
        log.append(batch(b"x"))
    log.close()
    (log.directory / ("0" * 20 + ".index")).unlink()  # forces a verifying scan of that segment
    path = log.directory / ACTIVE
    data = bytearray(path.read_bytes())
    data[one + 40] ^= 1
    path.write_bytes(bytes(data))
    with pytest.raises(CorruptLog, match="offset 1"):
        DiskLog.open(log.directory, log.config, log.options, clean=True)
    lenient = DiskLog.open(log.directory, log.config, options(truncate_corrupt=True), clean=True)
    assert (lenient.log_end_offset, len(list(log.directory.glob("*.log")))) == (1, 1)


def test_an_empty_or_zero_filled_tail_after_power_loss(tmp_path: Path) -> None:
    log, _positions = three_batches(tmp_path / "t-0")
    log.close()
    with open(log.directory / ACTIVE, "ab") as file:
        file.write(bytes(4096))  # a filesystem may show zeros past the last fsync
    again = DiskLog.open(log.directory, log.config, log.options, clean=False)
    assert values(again) == [b"a", b"b", b"c", b"d", b"e", b"f"]
    assert os.path.getsize(log.directory / ACTIVE) == again.active.size


def test_unfinished_and_decided_segment_replacements(tmp_path: Path) -> None:
    """The compaction hook: closed segments replaced by one (offsets kept, gaps
    allowed); a crash before the swap is decided keeps the old segments, after
    it the replacement completes on restart."""
    one = len(batch(b"x").data)
    log = disk_log(tmp_path / "t-0", segment_bytes=one)
    for value in (b"a", b"b", b"c", b"d"):
        log.append(batch(value))
    assert log.closed_segments() == [(0, 1), (1, 2), (2, 3)]
    kept = log.read_segment(1)  # only offset 1 survives "compaction" of [0, 3)
    log.replace_segments([0, 1, 2], kept)
    assert [o for o, _, _ in read_records(log.read(0, 1 << 20))] == [1, 3]
    assert log.closed_segments() == [(0, 2)]
    assert [o for o, _, _ in read_records(reopen(log, clean=True).read(0, 1 << 20))] == [1, 3]

    # A crash after the swap was decided, before old segments were deleted:
    directory = tmp_path / "t-0"
    (directory / ("0" * 20 + ".log")).rename(directory / f"{0:020d}.{3:020d}.swap")
    (directory / ("0" * 20 + ".log")).write_bytes(batch(b"stale").with_base_offset(0).data)
    (directory / f"{0:020d}.{3:020d}.cleaned").write_bytes(b"half written")
    again = DiskLog.open(directory, log.config, log.options, clean=False)
    assert [o for o, _, _ in read_records(again.read(0, 1 << 20))] == [1, 3]
    assert sorted(p.suffix for p in directory.iterdir() if p.suffix in (".swap", ".cleaned")) == []
