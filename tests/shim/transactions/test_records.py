"""`__transaction_state` records: Kafka's bytes, and a coordinator rebuilt from them."""

from __future__ import annotations

import pytest

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.protocol.transaction_records import (
    TransactionRecord,
    TransactionValue,
    decode_record,
    encode_record,
)
from kafka_shim.shim.transactions.state import TxnState
from tests.shim.transactions.driver import T0, T1, TIMEOUT_MS, TXN, Driver

VALUE = TransactionValue(
    producer_id=1000,
    producer_epoch=3,
    timeout_ms=60_000,
    status=int(TxnState.ONGOING),
    partitions=(("t", (0, 1)),),
    last_update_ms=1_700_000_000_100,
    start_ms=1_700_000_000_000,
    previous_producer_id=999,
    next_producer_id=1001,
    client_transaction_version=2,
)


def test_key_is_version_0_and_the_transactional_id() -> None:
    key, _ = encode_record(TransactionRecord("tx", VALUE), 2)
    assert key == bytes.fromhex("0000" + "0002") + b"tx"


def test_value_v0_as_kafka_writes_it_below_transaction_version_1() -> None:
    _, value = encode_record(TransactionRecord("tx", VALUE), 0)
    assert value is not None
    # version 0, pid, epoch, timeout, status, [topic "t", [0, 1]], last update, start
    assert value.hex() == (
        "0000"
        "00000000000003e8"
        "0003"
        "0000ea60"
        "01"
        "00000001"
        "0001"
        "74"
        "00000002"
        "00000000"
        "00000001"
        "0000018bcfe56864"
        "0000018bcfe56800"
    )
    decoded = decode_record(*encode_record(TransactionRecord("tx", VALUE), 0))
    # v0 has no tagged fields: the producer-id links and client version are not kept.
    assert decoded.value == VALUE._replace(
        previous_producer_id=-1, next_producer_id=-1, client_transaction_version=0
    )


@pytest.mark.parametrize("status", list(TxnState))
def test_value_v1_round_trips_every_state(status: TxnState) -> None:
    value = VALUE._replace(
        status=int(status), partitions=() if status is TxnState.EMPTY else VALUE.partitions
    )
    record = TransactionRecord("tx", value)
    assert decode_record(*encode_record(record, 2)) == record


def test_empty_writes_null_partitions_and_tombstones_have_no_value() -> None:
    _, value = encode_record(TransactionRecord("tx", VALUE._replace(status=0, partitions=())), 1)
    assert value is not None and b"\x00" in value
    assert encode_record(TransactionRecord("tx", None), 2)[1] is None
    assert decode_record(*encode_record(TransactionRecord("tx", None), 2)) == TransactionRecord("tx", None)


def _replayed(d: Driver) -> Driver:
    """A second coordinator loading the latest record of every id, as start-up does."""
    latest = {r.transactional_id: decode_record(*encode_record(r, 2)) for r in d.records}
    again = Driver()
    again.clock.now = d.now
    again.coordinator.load(latest.values(), d.now)
    return again


@pytest.mark.parametrize(
    "state", [TxnState.EMPTY, TxnState.ONGOING, TxnState.COMPLETE_COMMIT, TxnState.COMPLETE_ABORT]
)
def test_every_transition_is_recorded_and_replays(state: TxnState) -> None:
    d = Driver()
    d.reach(state)
    again = _replayed(d)
    assert again.coordinator.describe(TXN) == d.coordinator.describe(TXN)
    assert again.coordinator.take_completions() == []


@pytest.mark.parametrize(
    ("state", "commit"), [(TxnState.PREPARE_COMMIT, True), (TxnState.PREPARE_ABORT, False)]
)
def test_a_transaction_found_preparing_writes_its_markers_again(state: TxnState, commit: bool) -> None:
    d = Driver()
    d.reach(state)
    again = _replayed(d)
    again.pid, again.epoch = d.pid, d.epoch
    (completion,) = again.write_markers()
    assert (completion.commit, completion.partitions) == (commit, frozenset({T0}))
    assert again.state() is (TxnState.COMPLETE_COMMIT if commit else TxnState.COMPLETE_ABORT)


def test_an_ongoing_transaction_found_at_start_up_aborts_at_its_timeout() -> None:
    d = Driver()
    d.reach(TxnState.ONGOING)
    d.add(T0, T1)
    d.clock.now += TIMEOUT_MS // 2
    again = _replayed(d)
    assert again.coordinator.next_deadline() == d.now + TIMEOUT_MS // 2
    again.clock.now += TIMEOUT_MS // 2
    again.coordinator.tick(again.now)
    (abort,) = again.write_markers()
    assert not abort.commit and abort.partitions == frozenset({T0, T1})
    assert again.state() is TxnState.COMPLETE_ABORT
    assert (
        again.coordinator.add_partitions(TXN, d.pid, d.epoch, [T0], 0, again.now) == ErrorCode.PRODUCER_FENCED
    )


def test_a_replayed_id_keeps_bumping_its_epoch() -> None:
    d = Driver()
    d.init()
    d.init()
    again = _replayed(d)
    assert again.init() == ErrorCode.NONE
    assert (again.pid, again.epoch) == (d.pid, d.epoch + 1)


def test_tombstones_forget_the_id() -> None:
    d = Driver()
    d.init()
    d.records.append(TransactionRecord(TXN, None))
    assert _replayed(d).state() is None
