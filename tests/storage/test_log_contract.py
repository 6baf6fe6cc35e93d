"""Both partition logs (in memory, on disk) through the PartitionLog contract,
fed with batches built by kafka-python 3.0.12's DefaultRecordBatchBuilder."""

from __future__ import annotations

import pytest

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.protocol.records import RecordBatches
from kafka_shim.storage.errors import StorageError
from kafka_shim.storage.log import LEADER_EPOCH, PartitionLog, TimestampOffset
from tests.batches import make_batch, read_records
from tests.storage.logs import NewLog


def batches(*values: bytes, **kwargs: int) -> RecordBatches:
    return RecordBatches.parse(make_batch(list(values), **kwargs))  # type: ignore[arg-type]


def test_empty_log(new_log: NewLog) -> None:
    log = new_log()
    assert (log.log_start_offset, log.log_end_offset, log.high_watermark) == (0, 0, 0)
    assert log.read(0, 1024) == b""
    assert log.offset_for_timestamp(0) is None
    assert log.max_timestamp() is None


def test_offsets_follow_multi_record_batches(new_log: NewLog) -> None:
    log = new_log()
    first = log.append(batches(b"a", b"b", b"c"))
    second = log.append(batches(b"d", b"e"))
    assert (first.base_offset, first.last_offset) == (0, 2)
    assert (second.base_offset, second.last_offset) == (3, 4)
    # Latest is the last offset of the last batch + 1, not its base offset + 1.
    assert log.log_end_offset == 5
    assert [(o, v) for o, _, v in read_records(log.read(0, 1 << 20))] == [
        (0, b"a"),
        (1, b"b"),
        (2, b"c"),
        (3, b"d"),
        (4, b"e"),
    ]


def test_multi_batch_blob_appends_back_to_back(new_log: NewLog) -> None:
    log = new_log()
    blob = make_batch([b"a", b"b"]) + make_batch([b"c"])
    result = log.append(RecordBatches.parse(blob))
    assert (result.base_offset, result.last_offset, log.log_end_offset) == (0, 2, 3)


def test_read_starts_at_the_batch_holding_the_offset(new_log: NewLog) -> None:
    log = new_log()
    log.append(batches(b"a", b"b", b"c"))
    log.append(batches(b"d", b"e"))
    assert [o for o, _, _ in read_records(log.read(1, 1 << 20))] == [0, 1, 2, 3, 4]
    assert [o for o, _, _ in read_records(log.read(3, 1 << 20))] == [3, 4]
    assert log.read(5, 1 << 20) == b""


def test_read_respects_max_bytes_but_returns_one_whole_batch(new_log: NewLog) -> None:
    log = new_log()
    sizes = [len(log_batch) for log_batch in (make_batch([b"x" * 100]), make_batch([b"y" * 100]))]
    log.append(batches(b"x" * 100))
    log.append(batches(b"y" * 100))
    assert len(log.read(0, 1)) == sizes[0]  # bigger than max_bytes, still whole
    assert len(log.read(0, sizes[0] + sizes[1] - 1)) == sizes[0]
    assert len(log.read(0, sizes[0] + sizes[1])) == sum(sizes)
    assert RecordBatches.parse(log.read(0, 1)).first.base_offset == 0
    assert log.read(0, sizes[0] - 1, min_one=False) == b""
    assert len(log.read(0, sizes[0], min_one=False)) == sizes[0]


@pytest.mark.parametrize("offset", [-1, 4])
def test_read_outside_the_log_is_out_of_range(new_log: NewLog, offset: int) -> None:
    log = new_log()
    log.append(batches(b"a", b"b", b"c"))
    with pytest.raises(StorageError) as info:
        log.read(offset, 100)
    assert info.value.code == ErrorCode.OFFSET_OUT_OF_RANGE


def test_timestamp_lookups(new_log: NewLog) -> None:
    log = new_log()
    log.append(batches(b"a", b"b", timestamps=[100, 200]))  # type: ignore[arg-type]
    log.append(batches(b"c", b"d", timestamps=[900, 300]))  # type: ignore[arg-type]
    log.append(batches(b"e", timestamps=[500]))  # type: ignore[arg-type]
    # Kafka's LogSegment.findOffsetByTimestamp: the first batch whose max timestamp reaches the
    # target, then its first record that does, with that record's own timestamp.
    assert log.offset_for_timestamp(50) == TimestampOffset(100, 0)
    assert log.offset_for_timestamp(200) == TimestampOffset(200, 1)
    assert log.offset_for_timestamp(201) == TimestampOffset(900, 2)
    assert log.offset_for_timestamp(300) == TimestampOffset(900, 2)  # not 300 at 3: batch order
    assert log.offset_for_timestamp(901) is None
    # UnifiedLog.fetchOffsetByTimestamp(MAX_TIMESTAMP): the first offset holding the maximum
    # (RecordBatch.offsetOfMaxTimestamp), not the batch's last.
    assert log.max_timestamp() == TimestampOffset(900, 2)


def test_append_calls_the_hook_with_the_log_that_grew(new_log: NewLog) -> None:
    grown: list[PartitionLog] = []
    log = new_log(grown.append)
    log.append(batches(b"a"))
    assert grown == [log]


def test_stored_batches_keep_their_crc(new_log: NewLog) -> None:
    log = new_log()
    log.append(batches(b"a"))
    log.append(batches(b"b", b"c"))
    stored = RecordBatches.parse(log.read(0, 1 << 20))  # verifies every CRC
    assert [h.base_offset for h in stored.headers] == [0, 1]
    assert {h.partition_leader_epoch for h in stored.headers} == {LEADER_EPOCH}


def test_delete_records_moves_the_start_and_keeps_the_batch_holding_it(new_log: NewLog) -> None:
    log = new_log()
    log.append(batches(b"a", b"b", b"c"))
    log.append(batches(b"d", b"e"))
    assert log.delete_records(1) == 1
    assert log.log_start_offset == 1
    assert [o for o, _, _ in read_records(log.read(1, 1 << 20))] == [0, 1, 2, 3, 4]
    assert log.delete_records(0) == 1  # never backwards
    assert log.delete_records(-1) == 5  # -1: up to the high watermark
    assert log.read(5, 100) == b""
    with pytest.raises(StorageError) as info:
        log.delete_records(6)
    assert info.value.code == ErrorCode.OFFSET_OUT_OF_RANGE


def test_a_new_leader_epoch_starts_at_the_log_end_and_stamps_later_batches(new_log: NewLog) -> None:
    log = new_log()
    log.append(batches(b"a", b"b"))
    log.begin_leader_epoch(1)
    log.begin_leader_epoch(2)  # epoch 1 wrote nothing: Kafka's cache drops it
    log.append(batches(b"c"))
    assert log.epoch_starts == [(LEADER_EPOCH, 0), (2, 2)]
    stored = RecordBatches.parse(log.read(0, 1 << 20))
    assert [h.partition_leader_epoch for h in stored.headers] == [LEADER_EPOCH, 2]


@pytest.mark.parametrize(
    ("epoch", "answer"),
    [
        (2, (2, 3)),  # the current epoch ends at the log end
        (0, (0, 2)),  # an older one where the next known epoch starts
        (1, (0, 2)),  # one never written: named by the newest known below it
        (3, (-1, -1)),  # newer than any: no end
        (-1, (-1, -1)),
    ],
)
def test_end_offset_for_epoch(new_log: NewLog, epoch: int, answer: tuple[int, int]) -> None:
    log = new_log()
    log.append(batches(b"a", b"b"))
    log.begin_leader_epoch(2)
    log.append(batches(b"c"))
    assert log.end_offset_for_epoch(epoch) == answer
    assert [log.epoch_at(offset) for offset in range(3)] == [0, 0, 2]
