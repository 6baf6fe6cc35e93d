"""WriteTxnMarkers and DescribeProducers handlers through the wire schemas: what the
admin client's describeProducers / abortTransaction exchange with a partition leader."""

from __future__ import annotations

from typing import Any

import pytest

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.protocol.records import RecordBatches
from kafka_shim.shim.handlers import describe_producers, fetch, write_txn_markers
from kafka_shim.storage.log import PartitionLog
from tests.batches import make_batch
from tests.helpers import Harness

TXN, IDEMPOTENT = 6000, 6001


def append(log: PartitionLog, producer_id: int, sequence: int, count: int, *, transactional: bool) -> None:
    data = make_batch(
        [b"v"] * count,
        producer_id=producer_id,
        producer_epoch=3,
        base_sequence=sequence,
        transactional=transactional,
        base_timestamp=42_000,
    )
    log.append(RecordBatches.parse(data))


def harness() -> tuple[Harness, PartitionLog]:
    h = Harness()
    log = h.broker.topics.create("t", 1).partition(0)
    assert log is not None
    append(log, IDEMPOTENT, 0, 2, transactional=False)  # 0-1
    append(log, TXN, 0, 3, transactional=True)  # 2-4, open
    return h, log


def described(h: Harness, topics: list[dict[str, Any]]) -> Any:
    return h.call(describe_producers, 0, {"topics": topics})


def test_describe_producers_reports_the_open_transaction() -> None:
    h, _ = harness()
    response = described(
        h, [{"name": "t", "partition_indexes": [0, 1]}, {"name": "nope", "partition_indexes": [0]}]
    )
    known, beyond = response.topics[0].partitions
    assert (known.error_code, known.error_message) == (ErrorCode.NONE, None)
    producers = {p.producer_id: p for p in known.active_producers}
    txn, idempotent = producers[TXN], producers[IDEMPOTENT]
    assert (txn.producer_epoch, txn.last_sequence, txn.last_timestamp) == (3, 2, 42_002)
    assert (txn.coordinator_epoch, txn.current_txn_start_offset) == (-1, 2)
    assert (idempotent.last_sequence, idempotent.current_txn_start_offset) == (1, -1)
    assert (beyond.error_code, list(beyond.active_producers)) == (ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, [])
    assert response.topics[1].partitions[0].error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION


def markers_request(producer_epoch: int, commit: bool, coordinator_epoch: int = 5) -> dict[str, Any]:
    return {
        "markers": [
            {
                "producer_id": TXN,
                "producer_epoch": producer_epoch,
                "transaction_result": commit,
                "topics": [
                    {"name": "t", "partition_indexes": [0, 3]},
                    {"name": "other", "partition_indexes": [0]},
                ],
                "coordinator_epoch": coordinator_epoch,
            }
        ]
    }


@pytest.mark.parametrize("version", [0, 1])
def test_abort_transaction_as_the_admin_client_does(version: int) -> None:
    h, log = harness()
    # Admin.abortTransaction: DescribeProducers for the epochs, then WriteTxnMarkers(ABORT).
    txn = next(
        p
        for p in described(h, [{"name": "t", "partition_indexes": [0]}])
        .topics[0]
        .partitions[0]
        .active_producers
        if p.producer_id == TXN
    )
    response = h.call(
        write_txn_markers, version, markers_request(txn.producer_epoch, False, txn.coordinator_epoch)
    )
    [marker] = response.markers
    assert marker.producer_id == TXN
    results = {(t.name, p.partition_index): p.error_code for t in marker.topics for p in t.partitions}
    assert results == {
        ("t", 0): ErrorCode.NONE,
        ("t", 3): ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
        ("other", 0): ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
    }
    assert (log.log_end_offset, log.last_stable_offset) == (6, 6)
    part = (
        h.call(
            fetch,
            12,
            {
                "max_wait_ms": 0,
                "min_bytes": 1,
                "max_bytes": 1 << 20,
                "isolation_level": 1,
                "session_epoch": -1,
                "topics": [
                    {
                        "topic": "t",
                        "partitions": [{"partition": 0, "fetch_offset": 0, "partition_max_bytes": 1 << 20}],
                    }
                ],
            },
        )
        .responses[0]
        .partitions[0]
    )
    assert [(a.producer_id, a.first_offset) for a in part.aborted_transactions] == [(TXN, 2)]
    after = described(h, [{"name": "t", "partition_indexes": [0]}]).topics[0].partitions[0]
    txn_after = next(p for p in after.active_producers if p.producer_id == TXN)
    assert (txn_after.coordinator_epoch, txn_after.current_txn_start_offset) == (-1, -1)


@pytest.mark.parametrize(
    ("version", "transaction_version", "producer_epoch", "code"),
    [
        (1, 0, 2, ErrorCode.INVALID_PRODUCER_EPOCH),
        (1, 0, 3, ErrorCode.NONE),
        # v2 (KIP-1228): a TV2 marker carries the bumped epoch, so the data's own epoch is
        # stale (ProducerAppendInfo.checkProducerEpoch: markerEpoch <= current); TV0/1 as v1.
        (2, 0, 3, ErrorCode.NONE),
        (2, 2, 3, ErrorCode.INVALID_PRODUCER_EPOCH),
        (2, 2, 4, ErrorCode.NONE),
    ],
)
def test_stale_producer_epoch_is_refused(
    version: int, transaction_version: int, producer_epoch: int, code: ErrorCode
) -> None:
    h, log = harness()
    request = markers_request(producer_epoch, True)
    request["markers"][0]["transaction_version"] = transaction_version
    response = h.call(write_txn_markers, version, request)
    assert response.markers[0].topics[0].partitions[0].error_code == code
    assert log.last_stable_offset == (2 if code else 6)


def test_stale_coordinator_epoch_is_refused() -> None:
    h, log = harness()
    h.call(write_txn_markers, 1, markers_request(3, True, coordinator_epoch=5))
    append(log, TXN, 3, 1, transactional=True)  # the next transaction: offset 6
    response = h.call(write_txn_markers, 1, markers_request(3, False, coordinator_epoch=4))
    assert response.markers[0].topics[0].partitions[0].error_code == ErrorCode.TRANSACTION_COORDINATOR_FENCED
    assert log.last_stable_offset == 6
