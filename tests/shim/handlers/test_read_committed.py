"""Fetch and ListOffsets under isolation_level read_committed vs read_uncommitted, over a
partition holding transactional batches (kafka-python 3.0.12's DefaultRecordBatchBuilder)
and COMMIT/ABORT markers written by the log."""

from __future__ import annotations

from typing import Any

import pytest
from kafka.record.memory_records import MemoryRecords

from kafka_shim.protocol.records import RecordBatches
from kafka_shim.shim.handlers import fetch, list_offsets
from kafka_shim.storage.log import PartitionLog
from tests.batches import make_batch, read_records
from tests.helpers import Harness

A, B, PLAIN = 7000, 8000, 9000  # producer ids
READ_UNCOMMITTED, READ_COMMITTED = 0, 1


def write(
    log: PartitionLog, producer_id: int, sequence: int, *values: bytes, transactional: bool = True
) -> None:
    data = make_batch(
        list(values),
        producer_id=producer_id,
        producer_epoch=0,
        base_sequence=sequence,
        transactional=transactional,
        timestamps=[1_000 + sequence + i for i in range(len(values))],
    )
    log.append(RecordBatches.parse(data))


def harness() -> tuple[Harness, PartitionLog]:
    h = Harness()
    topic = h.broker.topics.create("t", 1)
    log = topic.partition(0)
    assert log is not None
    return h, log


def fetch_partition(h: Harness, isolation: int, offset: int = 0, version: int = 12, **overrides: Any) -> Any:
    topic = h.broker.topics.get("t")
    assert topic is not None
    request = {
        "max_wait_ms": 0,
        "min_bytes": 1,
        "max_bytes": 1 << 20,
        "isolation_level": isolation,
        "session_epoch": -1,
        "topics": [
            {
                "topic": "t",
                "topic_id": topic.topic_id,
                "partitions": [{"partition": 0, "fetch_offset": offset, "partition_max_bytes": 1 << 20}],
            }
        ],
    } | overrides
    response = h.call(fetch, version, request)
    return response.responses[0].partitions[0]


def values(records: bytes) -> list[bytes | None]:
    """The values of the data records, control batches skipped as consumers skip them."""
    found: list[bytes | None] = []
    memory = MemoryRecords(records)
    while (batch := memory.next_batch()) is not None:
        if not batch.is_control_batch:
            found.extend(record.value for record in batch)
    return found


@pytest.mark.parametrize("version", [4, 11, 12, 16])
def test_an_open_transaction_bounds_read_committed(version: int) -> None:
    h, log = harness()
    write(log, PLAIN, 0, b"p0", b"p1", transactional=False)  # 0-1
    write(log, A, 0, b"a0", b"a1")  # 2-3, open
    write(log, PLAIN, 2, b"p2", transactional=False)  # 4
    committed = fetch_partition(h, READ_COMMITTED, version=version)
    assert (committed.high_watermark, committed.last_stable_offset) == (5, 2)
    assert [o for o, _, _ in read_records(committed.records)] == [0, 1]
    assert committed.aborted_transactions == []
    uncommitted = fetch_partition(h, READ_UNCOMMITTED, version=version)
    assert (uncommitted.high_watermark, uncommitted.last_stable_offset) == (5, 2)
    assert [o for o, _, _ in read_records(uncommitted.records)] == [0, 1, 2, 3, 4]
    assert uncommitted.aborted_transactions is None
    # Between the LSO and the high watermark: nothing yet, not out of range.
    at_lso = fetch_partition(h, READ_COMMITTED, offset=3, version=version)
    assert (at_lso.error_code, at_lso.records) == (0, b"")


def test_aborted_transactions_are_listed_for_read_committed_only() -> None:
    h, log = harness()
    write(log, A, 0, b"a0", b"a1")  # 0-1
    write(log, B, 0, b"b0")  # 2
    log.write_txn_marker(A, 0, False, 0, 5_000)  # 3
    log.write_txn_marker(B, 0, True, 0, 5_000)  # 4
    committed = fetch_partition(h, READ_COMMITTED)
    assert committed.last_stable_offset == 5
    assert [(t.producer_id, t.first_offset) for t in committed.aborted_transactions] == [(A, 0)]
    # The client drops A's records; the data of both is served.
    assert values(committed.records) == [b"a0", b"a1", b"b0"]
    uncommitted = fetch_partition(h, READ_UNCOMMITTED)
    assert uncommitted.aborted_transactions is None
    # From past A's marker, its range is not reported.
    assert fetch_partition(h, READ_COMMITTED, offset=4).aborted_transactions == []


def test_read_committed_long_poll_returns_when_the_transaction_commits() -> None:
    h, log = harness()
    write(log, A, 0, b"a0")
    ctx = h.context(12)

    def commit() -> None:
        log.write_txn_marker(A, 0, True, 0, 5_000)

    ctx.during_wait.append(commit)
    topic = h.broker.topics.get("t")
    assert topic is not None
    request = {
        "max_wait_ms": 5_000,
        "min_bytes": 1,
        "max_bytes": 1 << 20,
        "isolation_level": READ_COMMITTED,
        "session_epoch": -1,
        "topics": [
            {
                "topic": "t",
                "topic_id": topic.topic_id,
                "partitions": [{"partition": 0, "fetch_offset": 0, "partition_max_bytes": 1 << 20}],
            }
        ],
    }
    part = h.call(fetch, 12, request, ctx).responses[0].partitions[0]
    assert len(ctx.waits) == 1 and ctx.waited_on == [[log]]
    assert part.last_stable_offset == 2
    assert values(part.records) == [b"a0"]


def list_offset(h: Harness, timestamp: int, isolation: int, version: int = 8) -> tuple[int, int]:
    request = {
        "replica_id": -1,
        "isolation_level": isolation,
        "topics": [{"name": "t", "partitions": [{"partition_index": 0, "timestamp": timestamp}]}],
    }
    part = h.call(list_offsets, version, request).topics[0].partitions[0]
    assert part.error_code == 0
    return part.timestamp, part.offset


@pytest.mark.parametrize("version", [2, 5, 8])
def test_list_offsets_latest_is_the_lso_under_read_committed(version: int) -> None:
    h, log = harness()
    write(log, PLAIN, 0, b"p0", b"p1", transactional=False)  # 0-1, timestamps 1000-1001
    write(log, A, 0, b"a0", b"a1")  # 2-3, timestamps 1000-1001 (a batch's max: 1001)
    write(log, PLAIN, 2, b"p2", transactional=False)  # 4, timestamp 1002
    assert list_offset(h, -1, READ_COMMITTED, version) == (-1, 2)
    assert list_offset(h, -1, READ_UNCOMMITTED, version) == (-1, 5)
    assert list_offset(h, -2, READ_COMMITTED, version) == (-1, 0)
    # By timestamp: only offsets below the LSO are found under read_committed.
    assert list_offset(h, 1002, READ_UNCOMMITTED, version) == (1002, 4)
    assert list_offset(h, 1002, READ_COMMITTED, version) == (-1, -1)
    log.write_txn_marker(A, 0, True, 0, 5_000)
    assert list_offset(h, -1, READ_COMMITTED, version) == (-1, 6)
    assert list_offset(h, 1002, READ_COMMITTED, version) == (1002, 4)


def test_list_offsets_v1_has_no_isolation_level() -> None:
    h, log = harness()
    write(log, A, 0, b"a0")
    assert list_offset(h, -1, READ_UNCOMMITTED, version=1) == (-1, 1)
