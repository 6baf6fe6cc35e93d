"""A transaction coordinator call whose `__transaction_state` records cannot be written leaves
every transactional id exactly as it was (the outcome's undo puts back the copies `_keep`
took: TransactionMetadata.copy and the unmarked partitions) and is answered Kafka's
coordinator error. One case per kind of call that writes, each changing the fields and
containers that call changes, so a field or container the undo left out fails its case."""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Callable
from typing import Any, NamedTuple

import pytest

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.shim.transactions.coordinator import TransactionConfig
from kafka_shim.shim.transactions.state import MAX_EPOCH, TransactionMetadata, TxnState
from kafka_shim.storage.errors import StorageError
from tests.shim.transactions.driver import FIRST_PID, T0, T1, TIMEOUT_MS, TXN, Driver

OTHER = "txn-b"
EXPIRATION_MS = 1_000


def exhaust_epoch(d: Driver) -> None:
    d.coordinator._txns[TXN].producer_epoch = d.epoch = MAX_EPOCH - 1


def empty_exhausted(d: Driver) -> None:
    d.reach(TxnState.EMPTY)
    exhaust_epoch(d)


def moved_to_a_new_producer_id(d: Driver) -> None:
    """Empty under a second producer id, the first kept as the previous one."""
    d.reach(TxnState.EMPTY)
    exhaust_epoch(d)
    assert d.init(expected=(FIRST_PID, MAX_EPOCH - 1)) == ErrorCode.NONE


def ongoing_v2_exhausted(d: Driver) -> None:
    d.reach(TxnState.ONGOING, version=2)
    exhaust_epoch(d)


def prepared_v2_exhausted(d: Driver) -> None:
    ongoing_v2_exhausted(d)
    assert d.end(True, version=2) == ErrorCode.NONE


def prepared_abort(d: Driver) -> None:
    """PrepareAbort, its markers held for the call to write."""
    d.reach(TxnState.ONGOING)
    assert d.end(False) == ErrorCode.NONE


def prepared_half_marked(d: Driver) -> None:
    """PrepareCommit on T0 and T1, T1's marker written, T0's retried (in `unmarked`)."""
    assert d.init() == ErrorCode.NONE
    assert d.add(T0, T1) == ErrorCode.NONE
    assert d.end(True) == ErrorCode.NONE
    d.write_markers(failing=frozenset({T0}))
    d.coordinator.tick(d.now + 10_000)  # the markers deadline queues T0 again


def idle_and_old(d: Driver) -> None:
    d.reach(TxnState.COMPLETE_COMMIT)
    d.clock.now += 10 * EXPIRATION_MS


class Case(NamedTuple):
    setup: Callable[[Driver], object]
    call: Callable[[Driver], object]
    config: TransactionConfig = TransactionConfig()


SHORT_EXPIRY = TransactionConfig(id_expiration_ms=EXPIRATION_MS, expiration_check_interval_ms=EXPIRATION_MS)

CASES = {
    "init a new id": Case(lambda d: None, lambda d: d.init()),
    "init bumps the epoch": Case(lambda d: d.reach(TxnState.COMPLETE_ABORT, version=2), lambda d: d.init()),
    "init keeping the start time": Case(
        lambda d: d.reach(TxnState.COMPLETE_COMMIT),
        lambda d: d.init(),
        TransactionConfig(init_keeps_start_ms=True),
    ),
    "init past an exhausted epoch": Case(
        empty_exhausted,
        lambda d: d.init(expected=(FIRST_PID, MAX_EPOCH - 1)),
    ),
    "init fences an ongoing transaction": Case(lambda d: d.reach(TxnState.ONGOING), lambda d: d.init()),
    "init past the cap forgets an idle id": Case(
        lambda d: d.init(OTHER), lambda d: d.init(), TransactionConfig(max_ids=1)
    ),
    "add partitions starts a transaction": Case(
        lambda d: d.reach(TxnState.COMPLETE_COMMIT), lambda d: d.add(T0, T1, version=2)
    ),
    "add partitions under a new producer id": Case(moved_to_a_new_producer_id, lambda d: d.add(T0)),
    "add offsets to an ongoing transaction": Case(
        lambda d: d.reach(TxnState.ONGOING), lambda d: d.add(T1, version=1)
    ),
    "end commit": Case(lambda d: d.reach(TxnState.ONGOING), lambda d: d.end(True)),
    "end abort v2 bumps the epoch": Case(
        lambda d: d.reach(TxnState.ONGOING, version=2), lambda d: d.end(False, version=2)
    ),
    "end v2 with nothing added": Case(lambda d: d.reach(TxnState.EMPTY), lambda d: d.end(False, version=2)),
    "end v2 past an exhausted epoch": Case(ongoing_v2_exhausted, lambda d: d.end(True, version=2)),
    "markers written complete it": Case(prepared_abort, lambda d: d.write_markers()),
    "the last marker written completes it": Case(prepared_half_marked, lambda d: d.write_markers()),
    "markers complete onto the next producer id": Case(prepared_v2_exhausted, lambda d: d.write_markers()),
    "the timeout fences and aborts": Case(
        lambda d: d.reach(TxnState.ONGOING), lambda d: d.coordinator.tick(d.now + TIMEOUT_MS)
    ),
    "expiry forgets idle ids": Case(idle_and_old, lambda d: d.coordinator.tick(d.now), SHORT_EXPIRY),
}


def memory(d: Driver) -> tuple[Any, ...]:
    """Everything the coordinator keeps between calls, copied whole."""
    coordinator = d.coordinator.coordinator
    return copy.deepcopy((coordinator._txns, coordinator._unmarked, coordinator._expiry_set))


@pytest.mark.parametrize("case", CASES.values(), ids=CASES.keys())
def test_an_unwritten_call_leaves_every_id_as_it_was(case: Case) -> None:
    written = Driver(case.config)
    case.setup(written)
    before, records = memory(written), len(written.records)
    case.call(written)
    assert len(written.records) > records and memory(written) != before  # a call that writes

    d = Driver(case.config)
    case.setup(d)
    before, records = memory(d), len(d.records)
    d.log.failing = ErrorCode.KAFKA_STORAGE_ERROR
    with pytest.raises(StorageError) as refused:
        case.call(d)
    assert refused.value.code == ErrorCode.NOT_COORDINATOR
    assert memory(d) == before
    assert len(d.records) == records and d.coordinator.take_completions() == []


def other_than(value: object) -> object:
    if isinstance(value, TxnState):
        return TxnState.PREPARE_COMMIT if value is not TxnState.PREPARE_COMMIT else TxnState.ONGOING
    if isinstance(value, set):
        return value | {T0, T1}
    if isinstance(value, str):
        return value + "-x"
    if isinstance(value, int):
        return value + 11
    raise AssertionError(f"a field of type {type(value).__name__}: teach this test a value for it")


def test_a_copy_has_every_field_and_its_own_partitions() -> None:
    meta = TransactionMetadata(TXN, FIRST_PID, TIMEOUT_MS, 0)
    for field in dataclasses.fields(TransactionMetadata):
        setattr(meta, field.name, other_than(getattr(meta, field.name)))
    copied = meta.copy()
    assert copied == meta
    assert copied.partitions is not meta.partitions
