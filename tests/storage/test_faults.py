"""Storage faults through the seam (`storage.faults`): whichever write fails (the batch, an
index entry, the fsync, the producer snapshot of a roll, the aborted-transaction index of
a marker, the topic catalog), the append is refused with KAFKA_STORAGE_ERROR, nothing of it
stays (the log still ends at a whole batch, in memory and on disk), and once the fault is
gone the next append goes on from there, without a restart."""

from __future__ import annotations

import errno
from collections.abc import Iterator
from pathlib import Path

import pytest

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.protocol.records import RecordBatches
from kafka_shim.storage.disk_log import DiskLog
from kafka_shim.storage.disk_store import DiskStore
from kafka_shim.storage.durability import DiskOptions, FsyncPolicy
from kafka_shim.storage.errors import StorageError
from kafka_shim.storage.faults import FAULTS
from kafka_shim.storage.log_config import LogConfig
from tests.batches import batch
from tests.helpers import FakeClock, wait_until
from tests.storage.logs import reopen

PRODUCER = 4242


@pytest.fixture(autouse=True)
def no_faults_left() -> Iterator[None]:
    yield
    FAULTS.clear()


def offsets_of(log: DiskLog) -> list[int]:
    out: list[int] = []
    offset = log.log_start_offset
    while offset < log.log_end_offset:
        data = log.read(offset, 1 << 20)
        parsed = RecordBatches.parse(data)
        out.extend(h.base_offset for h in parsed.headers)
        offset = parsed.headers[-1].last_offset + 1
    return out


def fresh(tmp_path: Path, fsync: FsyncPolicy = FsyncPolicy.ALWAYS) -> DiskLog:
    # Every batch lands in a new segment (segment.bytes below two batches): rolls on every append.
    options = DiskOptions(fsync=fsync, clock=FakeClock())
    return DiskLog.create(tmp_path / "t-0", LogConfig(segment_bytes=120, index_interval_bytes=1), options)


def idempotent(sequence: int) -> RecordBatches:
    return batch(b"v", producer_id=PRODUCER, producer_epoch=0, base_sequence=sequence)


# (the write that fails, the fsync policy, the errno)
SITES = [
    ("log", FsyncPolicy.ALWAYS, errno.ENOSPC),
    ("log", FsyncPolicy.NEVER, errno.EIO),
    ("index", FsyncPolicy.NEVER, errno.ENOSPC),
    ("fsync", FsyncPolicy.ALWAYS, errno.EIO),
    ("file:producer-state.json", FsyncPolicy.NEVER, errno.ENOSPC),
]


@pytest.mark.parametrize(("site", "fsync", "code"), SITES)
def test_a_failed_write_leaves_the_log_as_it_was_and_writes_resume(
    tmp_path: Path, site: str, fsync: FsyncPolicy, code: int
) -> None:
    log = fresh(tmp_path, fsync)
    log.append(idempotent(0))
    fault = FAULTS.arm(site, errno=code)
    with pytest.raises(StorageError) as refused:
        log.append(idempotent(1))
    assert refused.value.code == ErrorCode.KAFKA_STORAGE_ERROR
    assert fault.hits >= 1
    assert (log.log_end_offset, offsets_of(log)) == (1, [0])
    # The producer state did not move either: the retried batch is new, not a duplicate.
    assert log.producers.next_sequence(PRODUCER, 0) == 1

    FAULTS.clear()  # space is back
    assert not log.append(idempotent(1)).duplicate
    log.append(idempotent(2))
    assert offsets_of(log) == [0, 1, 2]
    for clean in (False, True):
        log = reopen(log, clean=clean)
        assert offsets_of(log) == [0, 1, 2]
        assert log.producers.next_sequence(PRODUCER, 0) == 3


def test_an_abort_marker_whose_range_cannot_be_indexed_is_cut_off(tmp_path: Path) -> None:
    log = fresh(tmp_path, FsyncPolicy.NEVER)
    log.append(batch(b"x", producer_id=PRODUCER, producer_epoch=0, base_sequence=0, transactional=True))
    FAULTS.arm("txnindex")
    with pytest.raises(StorageError):
        log.write_txn_marker(PRODUCER, 0, False, 0, 1)
    assert log.log_end_offset == 1
    assert log.last_stable_offset == 0  # the transaction is still open
    FAULTS.clear()
    assert log.write_txn_marker(PRODUCER, 0, False, 0, 1) == 1
    assert [(e.first_offset, e.last_offset) for e in log.aborted_ranges(0, 2)] == [(0, 1)]
    log = reopen(log, clean=False)
    assert [(e.first_offset, e.last_offset) for e in log.aborted_ranges(0, 2)] == [(0, 1)]


def test_a_partial_write_is_cut_off_on_disk(tmp_path: Path) -> None:
    """A batch the disk took only part of (a short write, then ENOSPC) leaves no bytes."""
    log = fresh(tmp_path, FsyncPolicy.NEVER)
    log.append(batch(b"first"))
    size = log.active.size
    FAULTS.arm("index")  # the batch's bytes are written; its index entry fails
    with pytest.raises(StorageError):
        log.append(batch(b"second"))
    assert log.active.log_path.stat().st_size == log.active.size
    assert log.active.size in (0, size)  # the roll to a fresh segment may have happened first


@pytest.mark.parametrize("change", ["create", "delete", "configs", "partitions"])
def test_a_topic_change_the_catalog_cannot_record_changes_nothing(tmp_path: Path, change: str) -> None:
    store = DiskStore(tmp_path, DiskOptions(clock=FakeClock()))
    try:
        topics = store.topics
        topics.create("kept", 1)
        FAULTS.arm("file:topics.json")
        with pytest.raises(StorageError) as refused:
            if change == "create":
                topics.create("new", 2)
            elif change == "delete":
                topics.delete("kept")
            elif change == "configs":
                topics.set_configs("kept", {"retention.ms": "1"})
            else:
                topics.add_partitions("kept", 3)
        assert refused.value.code == ErrorCode.KAFKA_STORAGE_ERROR
        kept = topics.get("kept")
        assert [t.name for t in topics] == ["kept"] and kept is not None
        assert (len(kept.partitions), kept.configs) == (1, {})
        # Logs made for the change are gone again (removed off the caller's thread), and the
        # catalog is the old one.
        wait_until(store.remover.idle, "the logs made for the change are removed", deadline_s=10)
        assert sorted(p.name for p in tmp_path.iterdir() if p.is_dir()) == ["kept-0"]
        FAULTS.clear()
    finally:
        store.close()
    reopened = DiskStore(tmp_path, DiskOptions(clock=FakeClock()))
    try:
        assert [t.name for t in reopened.topics] == ["kept"]
    finally:
        reopened.close()
