"""Idempotent producer sequence checks, through MemoryLog.append, with batches
from kafka-python 3.0.12's DefaultRecordBatchBuilder."""

from __future__ import annotations

from pathlib import Path

import pytest

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.protocol.records import RecordBatches
from kafka_shim.storage.errors import StorageError
from kafka_shim.storage.memory import MemoryLog
from kafka_shim.storage.producer_state import ProducerIdAllocator, ProducerStates
from tests.batches import make_batch
from tests.storage.logs import disk_log, reopen

PID = 4000


def produced(sequence: int, count: int = 2, epoch: int = 0, pid: int = PID) -> RecordBatches:
    data = make_batch([b"v"] * count, producer_id=pid, producer_epoch=epoch, base_sequence=sequence)
    return RecordBatches.parse(data)


def refusal(log: MemoryLog, batch: RecordBatches) -> ErrorCode:
    with pytest.raises(StorageError) as info:
        log.append(batch)
    return info.value.code


def test_in_sequence_batches_append() -> None:
    log = MemoryLog()
    assert log.append(produced(0)).base_offset == 0
    assert log.append(produced(2)).base_offset == 2
    assert log.log_end_offset == 4


def test_retried_batch_gets_its_first_offsets_and_is_not_written_twice() -> None:
    log = MemoryLog()
    log.append(produced(0))
    log.append(produced(2))
    retry = log.append(produced(0))
    assert (retry.base_offset, retry.last_offset, retry.duplicate) == (0, 1, True)
    assert log.log_end_offset == 4


def test_gap_is_out_of_order() -> None:
    log = MemoryLog()
    log.append(produced(0))
    assert refusal(log, produced(5)) == ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER


def test_old_duplicate_beyond_the_retained_window() -> None:
    log = MemoryLog()
    for sequence in range(0, 14, 2):  # seven batches: the first two are forgotten
        log.append(produced(sequence))
    # Kafka 3.9's ProducerAppendInfo.checkSequence: not a retained batch, not the next
    # sequence: out of order (the corpus' idempotent.* case 07 records the same).
    assert refusal(log, produced(0)) == ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER
    assert log.append(produced(4)).duplicate


def test_older_epoch_is_fenced() -> None:
    log = MemoryLog()
    log.append(produced(0, epoch=3))
    assert refusal(log, produced(2, epoch=2)) == ErrorCode.INVALID_PRODUCER_EPOCH


def test_new_epoch_restarts_at_sequence_zero() -> None:
    log = MemoryLog()
    log.append(produced(0, epoch=0))
    assert refusal(log, produced(2, epoch=1)) == ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER
    assert log.append(produced(0, epoch=1)).base_offset == 2


def test_unknown_producer_may_start_anywhere() -> None:
    # As Kafka does when a producer's state is gone (here: an in-memory restart).
    log = MemoryLog()
    assert log.append(produced(40)).base_offset == 0


def test_sequence_wraps_after_int32_max() -> None:
    log = MemoryLog()
    log.append(produced(2**31 - 2))  # sequences MAX-1, MAX
    assert log.append(produced(0)).base_offset == 2


def test_producers_are_independent() -> None:
    log = MemoryLog()
    log.append(produced(0, pid=1))
    assert log.append(produced(0, pid=2)).base_offset == 2


def test_idempotent_produce_holds_one_batch() -> None:
    log = MemoryLog()
    blob = make_batch([b"a"], producer_id=PID, producer_epoch=0, base_sequence=0) * 2
    assert refusal(log, RecordBatches.parse(blob)) == ErrorCode.INVALID_RECORD


def test_producer_ids_are_unique() -> None:
    allocator = ProducerIdAllocator(next_id=10)
    assert [allocator.allocate() for _ in range(3)] == [10, 11, 12]


EXPIRATION_MS = 86_400_000  # producer.id.expiration.ms, Kafka's default

# (ms since the producer's last batch, whether its transaction is open, forgotten?)
EXPIRY_CASES = [
    (EXPIRATION_MS - 1, False, False),
    (EXPIRATION_MS, False, True),
    (EXPIRATION_MS * 2, True, False),  # an open transaction keeps its producer
]


@pytest.mark.parametrize(("idle_ms", "open_transaction", "forgotten"), EXPIRY_CASES)
def test_idle_producers_expire_unless_a_transaction_is_open(
    tmp_path: Path, idle_ms: int, open_transaction: bool, forgotten: bool
) -> None:
    log = disk_log(tmp_path / "t-0")
    data = make_batch(
        [b"v"],
        producer_id=PID,
        producer_epoch=0,
        base_sequence=0,
        base_timestamp=1_000,
        transactional=open_transaction,
    )
    log.append(RecordBatches.parse(data))
    assert log.expire_producers(1_000 + idle_ms) == int(forgotten)
    retry = log.append(RecordBatches.parse(data))
    assert retry.duplicate is not forgotten  # a forgotten producer's retry is new here, as in Kafka
    log = reopen(log, clean=True)
    assert log.log_end_offset == (2 if forgotten else 1)


def test_a_snapshot_keeps_each_batch_whole_and_reads_older_ones() -> None:
    """The snapshot holds each batch's max timestamp (a retry is answered it as its log append
    time); one written before that field existed still loads, its batches at -1."""
    saved = {
        "7": {
            "epoch": 1,
            "batches": [[0, 4, 10, 14, 1234]],
            "coordinator_epoch": -1,
            "txn_first_offset": None,
        }
    }
    restored = ProducerStates.from_snapshot(saved)
    assert restored.snapshot()["7"]["batches"] == [[0, 4, 10, 14, 1234]]
    older = {"7": {"epoch": 1, "batches": [[0, 4, 10, 14]]}}
    assert ProducerStates.from_snapshot(older).snapshot()["7"]["batches"] == [[0, 4, 10, 14, -1]]


def test_a_producer_is_in_a_transaction_from_its_first_batch_to_the_marker() -> None:
    """What a broker process reads before asking another process's coordinator: only a
    transaction's first batch in a partition needs its verification (shim.processes.verification)."""
    log = MemoryLog()
    assert not log.producers.in_transaction(PID, 3)
    log.append(RecordBatches.parse(make_batch([b"v"], producer_id=PID, producer_epoch=3, transactional=True)))
    assert log.producers.in_transaction(PID, 3)
    assert not log.producers.in_transaction(PID, 4) and not log.producers.in_transaction(PID + 1, 3)
    log.write_txn_marker(PID, 3, True, 0, 0)
    assert not log.producers.in_transaction(PID, 3)
