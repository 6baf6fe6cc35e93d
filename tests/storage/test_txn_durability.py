"""Transactions in a disk log across restarts: `.txnindex` files in Kafka's layout, open
transactions in the producer snapshot, and recovery after a clean stop or a crash
(the log reopened without a close, as after kill -9; a real kill -9 is in
test_txn_kill9.py). Data batches from kafka-python 3.0.12's builder."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest

from kafka_shim.protocol.records import RecordBatches
from kafka_shim.shim.broker import Broker
from kafka_shim.shim.config.broker_config import BrokerConfig
from kafka_shim.storage import cleaner
from kafka_shim.storage.disk_log import DiskLog
from kafka_shim.storage.log import AbortedTransaction
from kafka_shim.storage.txn_index import TXN_INDEX_SUFFIX
from tests.batches import make_batch
from tests.storage.logs import disk_log, reopen

CLEAN_OR_CRASH = pytest.mark.parametrize("clean", [True, False], ids=["clean", "crash"])
A, B, C = 100, 200, 300
NOW = 1_700_000_000_000
# A few batches per segment: every scenario crosses rolls.
SMALL_SEGMENTS = 300


def data(log: DiskLog, producer_id: int, sequence: int, count: int = 2, *, key: bytes | None = None) -> int:
    batch = make_batch(
        [b"%d-%d" % (producer_id, sequence + i) for i in range(count)],
        producer_id=producer_id,
        producer_epoch=0,
        base_sequence=sequence,
        transactional=True,
        key=key,
    )
    return log.append(RecordBatches.parse(batch)).base_offset


def state(log: DiskLog) -> tuple[int, int, list[AbortedTransaction], dict[int, int]]:
    end = log.log_end_offset
    return end, log.last_stable_offset, log.aborted_transactions(0, end), log.producers.ongoing_transactions()


def txn_index_files(log: DiskLog) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(log.directory.glob("*" + TXN_INDEX_SUFFIX))}


def test_txnindex_entries_in_kafkas_layout(tmp_path: Path) -> None:
    log = disk_log(tmp_path / "t-0")
    data(log, A, 0)  # 0-1
    data(log, B, 0)  # 2-3
    log.write_txn_marker(A, 0, False, 0, NOW)  # 4: B still open, so the LSO is 2
    log.write_txn_marker(B, 0, False, 0, NOW)  # 5: nothing open, the LSO is 6
    log.write_txn_marker(C, 0, False, 0, NOW)  # 6: no data of C here: no entry
    entry = struct.Struct(">hqqqq")  # version, producer id, first, last, last stable offset
    expected = entry.pack(0, A, 0, 4, 2) + entry.pack(0, B, 2, 5, 6)
    assert txn_index_files(log) == {f"{0:020d}{TXN_INDEX_SUFFIX}": expected}


def build_history(log: DiskLog) -> None:
    """A open since the first segment, B aborted and C committed in later ones."""
    data(log, A, 0)  # 0-1: A opens
    for sequence in range(0, 6, 2):
        data(log, B, sequence)  # 2-7
    log.write_txn_marker(B, 0, False, 0, NOW)  # 8
    data(log, C, 0)  # 9-10
    log.write_txn_marker(C, 0, True, 0, NOW)  # 11
    data(log, B, 6)  # 12-13: B's next transaction
    log.write_txn_marker(B, 0, False, 0, NOW)  # 14
    data(log, A, 2)  # 15-16: A's transaction goes on


@CLEAN_OR_CRASH
def test_open_and_aborted_transactions_survive_a_restart(tmp_path: Path, clean: bool) -> None:
    log = disk_log(tmp_path / "t-0", segment_bytes=SMALL_SEGMENTS)
    build_history(log)
    assert len(log.segment_bases()) > 3
    before = state(log)
    assert before[1:] == (17, 0, [AbortedTransaction(B, 2), AbortedTransaction(B, 12)], {A: 0})[1:]
    files = txn_index_files(log)
    log = reopen(log, clean=clean)
    assert state(log) == before
    assert txn_index_files(log) == files
    # The transaction still open across the restart ends normally.
    log.write_txn_marker(A, 0, True, 0, NOW)
    assert log.last_stable_offset == log.log_end_offset == 18
    assert data(log, A, 4) == 18  # sequences go on too


def test_a_crash_before_the_index_write_is_repaired_from_the_markers(tmp_path: Path) -> None:
    log = disk_log(tmp_path / "t-0", segment_bytes=SMALL_SEGMENTS)
    build_history(log)
    before = state(log)
    active = log.directory / f"{log.segment_bases()[-1]:020d}{TXN_INDEX_SUFFIX}"
    data(log, C, 2)  # 17-18
    log.write_txn_marker(C, 0, False, 0, NOW)  # 19, in the active segment
    expected = before[2] + [AbortedTransaction(C, 17)]
    assert log.aborted_transactions(0, 20) == expected
    active.unlink()  # killed between the marker's write and its index entry's
    log = reopen(log, clean=False)
    assert log.aborted_transactions(0, 20) == expected
    assert active.exists()


def test_a_torn_index_is_derived_again(tmp_path: Path) -> None:
    log = disk_log(tmp_path / "t-0", segment_bytes=SMALL_SEGMENTS)
    build_history(log)
    before = state(log)
    files = txn_index_files(log)
    torn = log.directory / next(iter(files))
    with torn.open("ab") as file:
        file.write(b"\x00\x00\x01")  # half an entry
    log = reopen(log, clean=False)
    assert state(log) == before
    assert txn_index_files(log) == files


def test_a_crash_after_a_roll_keeps_a_transaction_open_in_an_older_segment(tmp_path: Path) -> None:
    log = disk_log(tmp_path / "t-0", segment_bytes=SMALL_SEGMENTS)
    data(log, A, 0)  # A opens in the first segment
    for sequence in range(0, 12, 2):
        data(log, B, sequence)  # rolls: A's first offset is behind the active segment
        log.write_txn_marker(B, 0, True, 0, NOW)
    assert log.segment_bases()[-1] > 0
    log = reopen(log, clean=False)  # never closed: only the snapshots taken at rolls
    assert (log.last_stable_offset, log.producers.ongoing_transactions()) == (0, {A: 0})


def test_compaction_keeps_the_aborted_ranges_of_the_segments_it_replaces(tmp_path: Path) -> None:
    log = disk_log(tmp_path / "t-0", cleanup_policy=frozenset({"compact"}))
    for round_number in range(6):
        data(log, A, round_number, count=1, key=b"k")
        log.write_txn_marker(A, 0, round_number % 2 == 1, 0, NOW)
        log.roll()  # small segments, which the cleaner merges
    before = log.aborted_transactions(0, log.log_end_offset)
    assert before == [AbortedTransaction(A, 0), AbortedTransaction(A, 4), AbortedTransaction(A, 8)]
    segments = len(log.segment_bases())
    assert cleaner.clean(log, NOW) > 0
    assert len(log.segment_bases()) < segments  # segments were merged
    assert log.aborted_transactions(0, log.log_end_offset) == before
    indexed = {int(p.stem) for p in log.directory.glob("*" + TXN_INDEX_SUFFIX)}
    assert indexed <= set(log.segment_bases())
    log = reopen(log, clean=False)
    assert log.aborted_transactions(0, log.log_end_offset) == before


def test_an_index_left_by_an_interrupted_compaction_is_adopted(tmp_path: Path) -> None:
    log = disk_log(tmp_path / "t-0", segment_bytes=SMALL_SEGMENTS)
    build_history(log)
    before = state(log)
    holder = next(b for b in log.segment_bases() if (log.directory / f"{b:020d}{TXN_INDEX_SUFFIX}").exists())
    log.close()
    # As after a crash between a compaction's swap and the move of its aborted ranges:
    # the entries sit in the index of a segment whose log is gone.
    orphan = log.directory / f"{10**9:020d}{TXN_INDEX_SUFFIX}"
    (log.directory / f"{holder:020d}{TXN_INDEX_SUFFIX}").rename(orphan)
    log = DiskLog.open(log.directory, log.config, log.options, clean=True)
    assert state(log) == before
    assert not orphan.exists()


def test_a_broker_restarted_on_its_data_dir_keeps_transactions(tmp_path: Path) -> None:
    broker = Broker(BrokerConfig(data_dir=tmp_path / "data"))
    log = broker.topics.create("t", 1).partition(0)
    assert isinstance(log, DiskLog)
    data(log, A, 0)
    data(log, B, 0)
    log.write_txn_marker(B, 0, False, 0, NOW)
    before = state(log)
    broker.close()
    broker = Broker(BrokerConfig(data_dir=tmp_path / "data"))
    try:
        reopened = broker.topics.partition("t", 0)
        assert isinstance(reopened, DiskLog)
        assert state(reopened) == before == (5, 0, [AbortedTransaction(B, 2)], {A: 0})
    finally:
        broker.close()
