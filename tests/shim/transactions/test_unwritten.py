"""Transaction calls whose `__transaction_state` record cannot be written (a full disk) change
nothing and are answered the coordinator's error, as the one writer (shim/effects.py) refuses."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.shim.transactions.state import TxnState
from kafka_shim.storage.faults import FAULTS
from tests.helpers import Harness
from tests.shim.handlers.test_transactions import Producer

IMPLICIT_ADD_PRODUCE = 12  # Produce v12 adds its partition to the transaction (TV2)


@pytest.fixture
def h(tmp_path: Path) -> Iterator[Harness]:
    harness = Harness(data_dir=tmp_path)
    harness.broker.topics.create("t", 1)
    yield harness
    FAULTS.clear()
    harness.broker.close()


def test_a_produce_whose_implicit_add_is_not_written_is_retried_as_kafka_answers(h: Harness) -> None:
    """Kafka's AddPartitionsToTxnManager hands a produce the coordinator's NOT_COORDINATOR as
    the retriable NOT_ENOUGH_REPLICAS; the transaction does not start."""
    producer = Producer(h, "tx")
    assert producer.init().error_code == ErrorCode.NONE
    FAULTS.arm("log")
    assert producer.produce("t", 0, version=IMPLICIT_ADD_PRODUCE) == ErrorCode.NOT_ENOUGH_REPLICAS
    described = h.broker.transactions.describe("tx")
    assert described is not None and described.state is TxnState.EMPTY
    FAULTS.clear()
    assert producer.produce("t", 0, version=IMPLICIT_ADD_PRODUCE) == ErrorCode.NONE
    described = h.broker.transactions.describe("tx")
    assert described is not None and described.state is TxnState.ONGOING


def test_a_transaction_left_preparing_is_completed_by_the_next_start(tmp_path: Path) -> None:
    """Its PrepareCommit record is written and its marker not: a broker started on the data
    directory writes the marker and the CompleteCommit record before it serves anyone."""
    h = Harness(data_dir=tmp_path)
    h.broker.topics.create("t", 1)
    producer = Producer(h, "tx")
    producer.init()
    producer.add("t", 0)
    assert producer.produce("t", 0) == ErrorCode.NONE
    FAULTS.arm("log", after=1)  # the PrepareCommit record goes through, the marker does not
    try:
        assert producer.end(commit=True).error_code == ErrorCode.NONE
        described = h.broker.transactions.describe("tx")
        assert described is not None and described.state is TxnState.PREPARE_COMMIT
    finally:
        FAULTS.clear()
        h.broker.close()
    again = Harness(data_dir=tmp_path)
    try:
        described = again.broker.transactions.describe("tx")
        assert described is not None and described.state is TxnState.COMPLETE_COMMIT
        log = again.broker.topics.partition("t", 0)
        assert log is not None and log.last_stable_offset == log.high_watermark  # the marker is in
    finally:
        again.broker.close()
