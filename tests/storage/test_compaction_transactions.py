"""Compaction of transactional data, in memory and on disk (the cleaner): an aborted
record never supersedes a committed one and is dropped, a record of a still-open
transaction supersedes nothing until it commits, markers and aborted ranges stay."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from kafka.record.memory_records import MemoryRecords

from kafka_shim.protocol.records import RecordBatches
from kafka_shim.storage import cleaner
from kafka_shim.storage.disk_log import DiskLog
from kafka_shim.storage.log import AbortedTransaction, PartitionLog
from kafka_shim.storage.log_config import LogConfig
from kafka_shim.storage.memory import MemoryLog
from tests.batches import make_batch
from tests.storage.logs import options

TXN, PLAIN = 100, 200
NOW = 1_700_000_000_000
KEY = b"k"

Compact = Callable[[], object]


class Writer:
    def __init__(self, log: PartitionLog) -> None:
        self.log = log
        self.sequences: dict[int, int] = {}

    def put(self, value: bytes, producer_id: int = TXN, *, transactional: bool = True) -> None:
        sequence = self.sequences.get(producer_id, 0)
        batch = make_batch(
            [value],
            key=KEY,
            producer_id=producer_id,
            producer_epoch=0,
            base_sequence=sequence,
            transactional=transactional,
            base_timestamp=NOW,
        )
        self.log.append(RecordBatches.parse(batch))
        self.sequences[producer_id] = sequence + 1
        if isinstance(self.log, DiskLog):
            self.log.roll()  # one batch per segment: the cleaner sees them all

    def end(self, commit: bool) -> None:
        self.log.write_txn_marker(TXN, 0, commit, 0, NOW)
        if isinstance(self.log, DiskLog):
            self.log.roll()


@pytest.fixture(params=["memory", "disk"])
def log_and_compact(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[PartitionLog, Compact]:
    if request.param == "memory":
        memory = MemoryLog()
        return memory, lambda: memory.compact(NOW, 0)
    disk = DiskLog.create(tmp_path / "t-0", LogConfig(cleanup_policy=frozenset({"compact"})), options())
    return disk, lambda: cleaner.clean(disk, NOW)


def data_values(log: PartitionLog) -> list[bytes | None]:
    """Record values of the data batches, as a consumer decodes them (markers skipped)."""
    found: list[bytes | None] = []
    memory = MemoryRecords(log.read(log.log_start_offset, 1 << 20))
    while (batch := memory.next_batch()) is not None:
        if not batch.is_control_batch:
            found.extend(record.value for record in batch)
    return found


def test_an_aborted_record_neither_supersedes_nor_survives(
    log_and_compact: tuple[PartitionLog, Compact],
) -> None:
    log, compact = log_and_compact
    w = Writer(log)
    w.put(b"committed", PLAIN, transactional=False)
    w.put(b"aborted")
    w.end(commit=False)
    compact()
    assert data_values(log) == [b"committed"]
    assert log.aborted_transactions(0, log.log_end_offset) == [AbortedTransaction(TXN, 1)]


def test_an_open_transaction_supersedes_nothing_until_it_commits(
    log_and_compact: tuple[PartitionLog, Compact],
) -> None:
    log, compact = log_and_compact
    w = Writer(log)
    w.put(b"v1", PLAIN, transactional=False)
    w.put(b"v2")  # open
    compact()
    assert data_values(log) == [b"v1", b"v2"]
    w.end(commit=True)
    compact()
    assert data_values(log) == [b"v2"]


def test_an_open_transaction_that_aborts_leaves_the_committed_value(
    log_and_compact: tuple[PartitionLog, Compact],
) -> None:
    log, compact = log_and_compact
    w = Writer(log)
    w.put(b"v1", PLAIN, transactional=False)
    w.put(b"v2")  # open while a clean runs
    compact()
    w.end(commit=False)
    compact()
    assert data_values(log) == [b"v1"]
    assert log.aborted_transactions(0, log.log_end_offset) == [AbortedTransaction(TXN, 1)]
