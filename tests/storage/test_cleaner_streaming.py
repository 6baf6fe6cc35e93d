"""The disk cleaner streams: its key map holds at most log.cleaner.dedupe.buffer.size / 24
x 0.9 keys (a clean stops at the first segment whose keys do not fit), segments are read
in chunks of whole batches, the compacted segment is written and fsynced outside the log's
lock, and a swap whose segments were taken meanwhile is dropped. A write that fails while
cleaning leaves the log as it was."""

from __future__ import annotations

import errno
import math
from collections.abc import Iterator
from pathlib import Path

import pytest

from kafka_shim.storage.cleaner import ENTRY_BYTES, OffsetMap, clean, read_chunks
from kafka_shim.storage.disk_log import DiskLog
from kafka_shim.storage.faults import FAULTS
from tests.batches import batch, read_records
from tests.storage.logs import disk_log, options


@pytest.fixture(autouse=True)
def no_faults_left() -> Iterator[None]:
    yield
    FAULTS.clear()


def compacted_log(tmp_path: Path, dedupe_keys: int, keys: list[bytes]) -> DiskLog:
    """One keyed record per segment; a key map of `dedupe_keys` keys."""
    one = len(batch(b"v", key=b"k0").data)
    buffer_bytes = math.ceil(dedupe_keys / 0.9) * ENTRY_BYTES
    log = disk_log(
        tmp_path / "t-0",
        options(cleaner_dedupe_buffer_size=buffer_bytes),
        segment_bytes=one,
        cleanup_policy=frozenset({"compact"}),
    )
    for number, key in enumerate(keys):
        log.append(batch(b"v%d" % number, key=key, base_timestamp=1_000))
    return log


def survivors(log: DiskLog) -> list[int]:
    return [offset for offset, _, _ in read_records(log.read(log.log_start_offset, 1 << 20))]


# (keys the map holds, keys appended one per segment, offsets surviving a clean)
MAP_CASES = [
    (8, [b"a", b"b", b"a", b"b", b"c"], [2, 3, 4]),  # everything fits: a full clean
    # Only a, b fit: the map stops at offset 4's segment ("c"): offsets 0-3 are cleaned with
    # what the map saw, 4 and later wait for a later pass.
    (2, [b"a", b"b", b"a", b"b", b"c", b"a", b"d"], [2, 3, 4, 5, 6]),
    (1, [b"a", b"b", b"a", b"c"], [0, 1, 2, 3]),  # the first segment's keys fit, not the second's
]


@pytest.mark.parametrize(("dedupe_keys", "keys", "kept"), MAP_CASES)
def test_the_key_map_bounds_what_one_clean_covers(
    tmp_path: Path, dedupe_keys: int, keys: list[bytes], kept: list[int]
) -> None:
    log = compacted_log(tmp_path, dedupe_keys, keys)
    clean(log, now_ms=10_000)
    assert survivors(log) == kept


def test_the_offset_map_refuses_new_keys_when_full() -> None:
    offsets = OffsetMap(2 * ENTRY_BYTES + 10)  # 0.9 x 2 entries: one key
    assert offsets.capacity == 1
    assert offsets.put(b"a", 1) and offsets.put(b"a", 5)
    assert not offsets.put(b"b", 6)
    assert (offsets.get(b"a", -1), offsets.get(b"b", -1), len(offsets)) == (5, -1, 1)


@pytest.mark.parametrize("chunk_bytes", [1, 100, 1 << 20])
def test_segments_are_read_in_runs_of_whole_batches(tmp_path: Path, chunk_bytes: int) -> None:
    log = disk_log(tmp_path / "t-0")
    for number in range(5):
        log.append(batch(b"x" * 40 * number, key=b"k"))
    data = log.read(0, 1 << 20)
    chunks = list(read_chunks(log.active.log_path, log.active.size, chunk_bytes))
    assert b"".join(chunks) == data
    assert all(read_records(chunk) for chunk in chunks)  # each parses: whole batches only


def test_a_failed_write_while_cleaning_leaves_the_log_as_it_was(tmp_path: Path) -> None:
    log = compacted_log(tmp_path, 8, [b"a", b"a", b"a", b"b"])
    before = survivors(log)
    FAULTS.arm("cleaned", errno=errno.ENOSPC)
    with pytest.raises(OSError):
        clean(log, now_ms=10_000)
    assert survivors(log) == before and not list(log.directory.glob("*.cleaned"))
    log.append(batch(b"later", key=b"c"))
    FAULTS.clear()
    assert clean(log, now_ms=10_000) == 4
    assert survivors(log) == [2, 3, 4]


def test_a_swap_of_segments_deleted_meanwhile_is_dropped(tmp_path: Path) -> None:
    log = compacted_log(tmp_path, 8, [b"a", b"a", b"a", b"b"])
    replacement = log.begin_replacement([0, 1])
    replacement.write(log.read(1, 1 << 20)[: len(batch(b"v1", key=b"a").data)])
    log.delete_records(2)  # retention or DeleteRecords took both segments
    assert not log.replace_segments([0, 1], replacement)
    assert survivors(log) == [2, 3] and not list(log.directory.glob("*.cleaned"))
