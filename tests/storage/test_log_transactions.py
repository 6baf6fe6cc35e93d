"""Transactions in both partition logs (in memory, on disk) through the PartitionLog
contract: transactional appends, COMMIT/ABORT markers, the last stable offset, aborted
ranges, fencing of markers, and idempotent sequences across transactions. Data batches
are built by kafka-python 3.0.12's DefaultRecordBatchBuilder; markers are read back with
kafka-python's record reader too."""

from __future__ import annotations

import struct
from dataclasses import dataclass, field

import pytest
from kafka.record.default_records import DefaultRecordBatch

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.protocol.records import RecordBatches
from kafka_shim.storage.errors import StorageError
from kafka_shim.storage.log import AbortedTransaction, PartitionLog
from tests.batches import make_batch, read_records
from tests.storage.logs import NewLog

A, B = 7000, 8000  # producer ids
NOW = 1_700_000_000_000


@dataclass(frozen=True)
class Data:
    producer_id: int
    sequence: int
    count: int = 2
    epoch: int = 0
    transactional: bool = True


@dataclass(frozen=True)
class Marker:
    producer_id: int
    commit: bool
    epoch: int = 0
    coordinator_epoch: int = 0


Step = Data | Marker


def run(log: PartitionLog, step: Step) -> int:
    """Apply one step; the offset it got (base offset of data, offset of a marker)."""
    if isinstance(step, Marker):
        return log.write_txn_marker(step.producer_id, step.epoch, step.commit, step.coordinator_epoch, NOW)
    data = make_batch(
        [b"v%d" % (step.sequence + i) for i in range(step.count)],
        producer_id=step.producer_id,
        producer_epoch=step.epoch,
        base_sequence=step.sequence,
        transactional=step.transactional,
    )
    return log.append(RecordBatches.parse(data)).base_offset


@dataclass(frozen=True)
class Case:
    steps: list[Step]
    last_stable_offset: int
    # Aborted transactions Fetch reports over the whole log.
    aborted: list[AbortedTransaction] = field(default_factory=list)


CASES = {
    "open transaction holds the LSO at its first offset": Case([Data(A, 0), Data(A, 2)], 0),
    "commit releases it": Case([Data(A, 0), Data(A, 2), Marker(A, commit=True)], 5),
    "abort releases it and keeps the range": Case(
        [Data(A, 0), Marker(A, commit=False)], 3, [AbortedTransaction(A, 0)]
    ),
    "idempotent data does not hold the LSO": Case([Data(A, 0, transactional=False)], 2),
    "the earliest of two open transactions bounds the LSO": Case([Data(A, 0), Data(B, 0), Data(A, 2)], 0),
    "the other producer's transaction bounds it once the first commits": Case(
        [Data(A, 0), Data(B, 0), Marker(A, commit=True)], 2
    ),
    "both end: one aborted, one committed": Case(
        [Data(A, 0), Data(B, 0), Marker(B, commit=False), Marker(A, commit=True)],
        6,
        [AbortedTransaction(B, 2)],
    ),
    "a marker without data in the partition leaves no aborted range": Case(
        [Data(B, 0, transactional=False), Marker(A, commit=False)], 3
    ),
    "a second transaction opens at its own first batch": Case(
        [Data(A, 0), Marker(A, commit=False), Data(A, 2), Data(A, 4)], 3, [AbortedTransaction(A, 0)]
    ),
    "sequences go on across transactions of one epoch": Case(
        [Data(A, 0), Marker(A, commit=True), Data(A, 2), Marker(A, commit=False)],
        6,
        [AbortedTransaction(A, 3)],
    ),
    # Transaction version 2: the coordinator bumps the epoch with the marker; the next
    # transaction starts that epoch at sequence 0.
    "a marker with the bumped epoch starts the next epoch at sequence 0": Case(
        [Data(A, 0), Marker(A, commit=True, epoch=1), Data(A, 0, epoch=1)], 3
    ),
}


@pytest.mark.parametrize("case", CASES.values(), ids=CASES.keys())
def test_transaction_scenarios(new_log: NewLog, case: Case) -> None:
    log = new_log()
    for step in case.steps:
        run(log, step)
    assert log.last_stable_offset == case.last_stable_offset
    assert log.high_watermark == log.log_end_offset
    assert log.aborted_transactions(0, log.log_end_offset) == case.aborted


REFUSALS = {
    "a marker of an older producer epoch is fenced": (
        [Data(A, 0, epoch=1)],
        Marker(A, commit=True, epoch=0),
        ErrorCode.INVALID_PRODUCER_EPOCH,
    ),
    "a marker from an older coordinator epoch is fenced": (
        [Data(A, 0), Marker(A, commit=True, coordinator_epoch=3), Data(A, 2)],
        Marker(A, commit=False, coordinator_epoch=2),
        ErrorCode.TRANSACTION_COORDINATOR_FENCED,
    ),
    "non-transactional data inside an open transaction": (
        [Data(A, 0)],
        Data(A, 2, transactional=False),
        ErrorCode.INVALID_TXN_STATE,
    ),
    "transactional data of an older epoch": (
        [Data(A, 0), Marker(A, commit=True, epoch=1)],
        Data(A, 2, epoch=0),
        ErrorCode.INVALID_PRODUCER_EPOCH,
    ),
    "a transactional sequence gap": ([Data(A, 0)], Data(A, 5), ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER),
    "a new epoch not at sequence 0": (
        [Data(A, 0)],
        Data(A, 3, epoch=1),
        ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER,
    ),
}


@pytest.mark.parametrize(("steps", "refused", "code"), REFUSALS.values(), ids=REFUSALS.keys())
def test_refusals_change_nothing(new_log: NewLog, steps: list[Step], refused: Step, code: ErrorCode) -> None:
    log = new_log()
    for step in steps:
        run(log, step)
    before = (log.log_end_offset, log.last_stable_offset, log.aborted_transactions(0, log.log_end_offset))
    with pytest.raises(StorageError) as info:
        run(log, refused)
    assert info.value.code == code
    assert (
        log.log_end_offset,
        log.last_stable_offset,
        log.aborted_transactions(0, log.log_end_offset),
    ) == before


def test_retried_transactional_batch_is_answered_with_its_first_offsets(new_log: NewLog) -> None:
    log = new_log()
    run(log, Data(A, 0))
    run(log, Data(A, 2))
    assert run(log, Data(A, 0)) == 0
    assert log.log_end_offset == 4


def test_marker_is_kafkas_control_batch(new_log: NewLog) -> None:
    log = new_log()
    run(log, Data(A, 0, epoch=4))
    offset = log.write_txn_marker(A, 4, True, 9, NOW)
    assert offset == 2
    stored = RecordBatches.parse(log.read(offset, 1 << 20))  # CRC checked
    header = stored.last
    assert (header.base_offset, header.producer_id, header.producer_epoch) == (2, A, 4)
    assert header.is_control and header.is_transactional and header.base_sequence == -1
    batch = DefaultRecordBatch(stored.data[header.position : header.end])
    assert batch.is_control_batch and batch.is_transactional
    [record] = list(batch)
    assert record.timestamp == NOW
    assert record.key == struct.pack(">hh", 0, 1)  # version 0, COMMIT
    assert record.value == struct.pack(">hi", 0, 9)  # version 0, coordinator epoch
    abort = log.write_txn_marker(A, 4, False, 9, NOW)
    tail = RecordBatches.parse(log.read(abort, 1 << 20))
    assert next(iter(DefaultRecordBatch(tail.data[tail.last.position :]))).key == struct.pack(">hh", 0, 0)


def test_markers_wake_fetches(new_log: NewLog) -> None:
    grown: list[PartitionLog] = []
    log = new_log(grown.append)
    run(log, Data(A, 0))
    log.write_txn_marker(A, 0, True, 0, NOW)
    assert grown == [log, log]


@pytest.mark.parametrize(
    ("start", "end", "expected"),
    [
        (0, 1, [AbortedTransaction(A, 0)]),  # the range's first records
        (2, 3, [AbortedTransaction(A, 0)]),  # only the marker of A's transaction
        (3, 4, []),  # after A's marker, before B's data
        (0, 100, [AbortedTransaction(A, 0), AbortedTransaction(B, 5)]),
        (4, 5, []),  # committed data
        (5, 6, [AbortedTransaction(B, 5)]),
        (8, 9, []),  # after everything
    ],
)
def test_aborted_transactions_overlapping_a_range(
    new_log: NewLog, start: int, end: int, expected: list[AbortedTransaction]
) -> None:
    # A's data 0-1 aborted by the marker at 2, idempotent data 3-4, B's data 5-6 aborted at 7.
    log = new_log()
    for step in (
        Data(A, 0),
        Marker(A, commit=False),
        Data(B + 1, 0, transactional=False),
        Data(B, 0),
        Marker(B, commit=False),
    ):
        run(log, step)
    assert log.log_end_offset == 8
    assert log.aborted_transactions(start, end) == expected


def test_read_committed_stops_below_the_last_stable_offset(new_log: NewLog) -> None:
    log = new_log()
    run(log, Data(B, 0, transactional=False))  # 0-1
    run(log, Data(A, 0))  # 2-3, open
    run(log, Data(B, 2, transactional=False))  # 4-5
    assert log.last_stable_offset == 2
    assert [o for o, _, _ in read_records(log.read_committed(0, 1 << 20))] == [0, 1]
    assert log.read_committed(2, 1 << 20) == b""
    assert log.read_committed(5, 1 << 20) == b""  # above the LSO, below the high watermark
    assert [o for o, _, _ in read_records(log.read(0, 1 << 20))] == [0, 1, 2, 3, 4, 5]
    log.write_txn_marker(A, 0, True, 0, NOW)
    # The marker (offset 6) is served too: consumers skip control batches themselves.
    assert [o for o, _, _ in read_records(log.read_committed(0, 1 << 20))] == [0, 1, 2, 3, 4, 5, 6]
    with pytest.raises(StorageError) as info:
        log.read_committed(8, 100)
    assert info.value.code == ErrorCode.OFFSET_OUT_OF_RANGE


def test_the_lso_never_falls_below_the_log_start(new_log: NewLog) -> None:
    log = new_log()
    run(log, Data(A, 0))  # 0-1, open
    run(log, Data(B, 0, count=3, transactional=False))  # 2-4
    assert log.last_stable_offset == 0
    log.delete_records(3)  # DeleteRecords may go up to the high watermark
    assert log.last_stable_offset == log.log_start_offset == 3
    assert log.read_committed(3, 1 << 20) == b""
    log.write_txn_marker(A, 0, True, 0, NOW)
    assert log.last_stable_offset == 6
