"""Every transition and error of the transaction coordinator, table-driven:
(state, event, expected answer, next state), on a fake clock."""

from __future__ import annotations

import pytest

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.shim.transactions.coordinator import MARKER_RETRY_MS, TransactionConfig
from kafka_shim.shim.transactions.state import MAX_EPOCH, TxnState
from tests.shim.transactions.driver import FIRST_PID, T0, T1, TIMEOUT_MS, TXN, Driver

S = TxnState
E = ErrorCode

# --- InitProducerId ---------------------------------------------------------------------


def test_new_transactional_id_gets_a_producer_id_at_epoch_0() -> None:
    d = Driver()
    assert d.init() == E.NONE
    assert (d.pid, d.epoch, d.state()) == (FIRST_PID, 0, S.EMPTY)


@pytest.mark.parametrize(
    ("state", "answer", "next_state", "epoch_after"),
    [
        (S.EMPTY, E.NONE, S.EMPTY, 1),
        (S.COMPLETE_COMMIT, E.NONE, S.EMPTY, 1),
        (S.COMPLETE_ABORT, E.NONE, S.EMPTY, 1),
        # An open transaction is aborted under a bumped epoch (twice under TV2: the fence,
        # then the end); the caller retries.
        (S.ONGOING, E.CONCURRENT_TRANSACTIONS, S.COMPLETE_ABORT, 2),
        (S.PREPARE_COMMIT, E.CONCURRENT_TRANSACTIONS, S.PREPARE_COMMIT, 0),
        (S.PREPARE_ABORT, E.CONCURRENT_TRANSACTIONS, S.PREPARE_ABORT, 0),
    ],
)
def test_init_producer_id_by_state(state: S, answer: E, next_state: S, epoch_after: int) -> None:
    d = Driver()
    d.reach(state)
    result = d.coordinator.init_producer_id(TXN, TIMEOUT_MS, None, d.now)
    assert result.error == answer
    d.write_markers()
    assert d.state() is next_state
    described = d.coordinator.describe(TXN)
    assert described is not None and described.producer_epoch == epoch_after


def test_init_fences_an_ongoing_transaction_then_bumps_again_on_retry() -> None:
    d = Driver()
    d.reach(S.ONGOING)
    assert d.coordinator.init_producer_id(TXN, TIMEOUT_MS, None, d.now).error == E.CONCURRENT_TRANSACTIONS
    (abort,) = d.write_markers()
    assert (abort.commit, abort.producer_epoch, abort.partitions) == (False, 2, frozenset({T0}))
    old_epoch = d.epoch
    assert d.init() == E.NONE
    assert d.epoch == 3
    # The zombie is fenced everywhere.
    assert d.add(epoch=old_epoch) == E.PRODUCER_FENCED
    assert d.end(True, epoch=old_epoch) == E.PRODUCER_FENCED


@pytest.mark.parametrize(
    ("txn", "timeout_ms", "answer"),
    [
        ("", TIMEOUT_MS, E.INVALID_REQUEST),
        (TXN, 0, E.INVALID_TRANSACTION_TIMEOUT),
        (TXN, 900_001, E.INVALID_TRANSACTION_TIMEOUT),
        (TXN, 900_000, E.NONE),
    ],
)
def test_init_validates_id_and_timeout(txn: str, timeout_ms: int, answer: E) -> None:
    d = Driver()
    assert d.coordinator.init_producer_id(txn, timeout_ms, None, d.now).error == answer


def test_transaction_max_timeout_is_configurable() -> None:
    d = Driver(TransactionConfig(max_timeout_ms=1000))
    assert d.coordinator.init_producer_id(TXN, 1001, None, d.now).error == E.INVALID_TRANSACTION_TIMEOUT


# KIP-360: a v3+ producer re-initialises with the producer id and epoch it holds.
@pytest.mark.parametrize(
    ("expected", "answer", "epoch_after"),
    [
        ((FIRST_PID, 1), E.NONE, 2),  # its current epoch: bumped
        ((FIRST_PID, 0), E.NONE, 1),  # the epoch before the last bump: a retry, same answer
        ((FIRST_PID, 5), E.PRODUCER_FENCED, None),  # an epoch it never had
        ((FIRST_PID + 77, 1), E.PRODUCER_FENCED, None),  # another producer id
    ],
)
def test_init_with_known_producer_id_and_epoch(
    expected: tuple[int, int], answer: E, epoch_after: int | None
) -> None:
    d = Driver()
    d.init()
    d.init(expected=(FIRST_PID, 0))  # epoch 1, last epoch 0
    result = d.coordinator.init_producer_id(TXN, TIMEOUT_MS, expected, d.now)
    assert result.error == answer
    if epoch_after is not None:
        assert (result.producer_id, result.producer_epoch) == (FIRST_PID, epoch_after)


def test_an_exhausted_epoch_moves_to_a_new_producer_id() -> None:
    d = Driver()
    d.init()
    d.coordinator._txns[TXN].producer_epoch = MAX_EPOCH - 1
    assert d.init(expected=(FIRST_PID, MAX_EPOCH - 1)) == E.NONE
    assert (d.pid, d.epoch) == (FIRST_PID + 1, 0)
    # A retry from the old producer id at the exhausted epoch is not fenced.
    retry = d.coordinator.init_producer_id(TXN, TIMEOUT_MS, (FIRST_PID, MAX_EPOCH - 1), d.now)
    assert retry.error != E.PRODUCER_FENCED


# --- AddPartitionsToTxn ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("state", "answer", "next_state"),
    [
        (S.EMPTY, E.NONE, S.ONGOING),
        (S.ONGOING, E.NONE, S.ONGOING),
        (S.COMPLETE_COMMIT, E.NONE, S.ONGOING),
        (S.COMPLETE_ABORT, E.NONE, S.ONGOING),
        (S.PREPARE_COMMIT, E.CONCURRENT_TRANSACTIONS, S.PREPARE_COMMIT),
        (S.PREPARE_ABORT, E.CONCURRENT_TRANSACTIONS, S.PREPARE_ABORT),
    ],
)
def test_add_partitions_by_state(state: S, answer: E, next_state: S) -> None:
    d = Driver()
    d.reach(state)
    assert d.add(T1) == answer
    assert d.state() is next_state


@pytest.mark.parametrize(
    ("pid_offset", "epoch_offset", "answer"),
    [(1, 0, E.INVALID_PRODUCER_ID_MAPPING), (0, 1, E.PRODUCER_FENCED), (0, -1, E.PRODUCER_FENCED)],
)
def test_add_partitions_checks_producer(pid_offset: int, epoch_offset: int, answer: E) -> None:
    d = Driver()
    d.init()
    d.init()
    result = d.coordinator.add_partitions(TXN, d.pid + pid_offset, d.epoch + epoch_offset, [T0], 0, d.now)
    assert result == answer


def test_add_partitions_unknown_or_empty_id() -> None:
    d = Driver()
    assert d.coordinator.add_partitions("nope", 1, 0, [T0], 0, d.now) == E.INVALID_PRODUCER_ID_MAPPING
    assert d.coordinator.add_partitions("", 1, 0, [T0], 0, d.now) == E.INVALID_REQUEST


def test_adding_known_partitions_writes_no_record() -> None:
    d = Driver()
    d.reach(S.ONGOING)
    before = len(d.records)
    assert d.add(T0) == E.NONE
    assert len(d.records) == before
    assert d.add(T0, T1) == E.NONE
    assert len(d.records) == before + 1


@pytest.mark.parametrize(
    ("state", "partition", "answer"),
    [
        (S.ONGOING, T0, E.NONE),
        (S.ONGOING, T1, E.TRANSACTION_ABORTABLE),
        (S.EMPTY, T0, E.TRANSACTION_ABORTABLE),
        (S.COMPLETE_COMMIT, T0, E.TRANSACTION_ABORTABLE),
        (S.PREPARE_COMMIT, T0, E.CONCURRENT_TRANSACTIONS),
    ],
)
def test_verify_partition(state: S, partition: object, answer: E) -> None:
    d = Driver()
    d.reach(state)
    assert d.coordinator.verify_partition(TXN, d.pid, d.epoch, partition) == answer  # type: ignore[arg-type]
    assert d.coordinator.verify_partition(TXN, d.pid, d.epoch - 1, T0) == E.PRODUCER_FENCED
    assert d.coordinator.verify_partition("other", d.pid, d.epoch, T0) == E.INVALID_PRODUCER_ID_MAPPING


# --- EndTxn, transaction version 1 (v0-4) ---------------------------------------------------


@pytest.mark.parametrize(
    ("state", "commit", "answer", "next_state"),
    [
        (S.ONGOING, True, E.NONE, S.PREPARE_COMMIT),
        (S.ONGOING, False, E.NONE, S.PREPARE_ABORT),
        (S.EMPTY, True, E.INVALID_TXN_STATE, S.EMPTY),
        (S.EMPTY, False, E.INVALID_TXN_STATE, S.EMPTY),
        (S.COMPLETE_COMMIT, True, E.NONE, S.COMPLETE_COMMIT),  # a retry
        (S.COMPLETE_COMMIT, False, E.INVALID_TXN_STATE, S.COMPLETE_COMMIT),
        (S.COMPLETE_ABORT, False, E.NONE, S.COMPLETE_ABORT),
        (S.COMPLETE_ABORT, True, E.INVALID_TXN_STATE, S.COMPLETE_ABORT),
        (S.PREPARE_COMMIT, True, E.CONCURRENT_TRANSACTIONS, S.PREPARE_COMMIT),
        (S.PREPARE_COMMIT, False, E.INVALID_TXN_STATE, S.PREPARE_COMMIT),
        (S.PREPARE_ABORT, False, E.CONCURRENT_TRANSACTIONS, S.PREPARE_ABORT),
        (S.PREPARE_ABORT, True, E.INVALID_TXN_STATE, S.PREPARE_ABORT),
    ],
)
def test_end_txn_v1_by_state(state: S, commit: bool, answer: E, next_state: S) -> None:
    d = Driver()
    d.reach(state)
    epoch = d.epoch
    assert d.end(commit) == answer
    assert d.state() is next_state
    assert d.coordinator.describe(TXN).producer_epoch == epoch  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("pid_offset", "epoch_offset", "answer"),
    [(1, 0, E.INVALID_PRODUCER_ID_MAPPING), (0, -1, E.PRODUCER_FENCED), (0, 1, E.PRODUCER_FENCED)],
)
def test_end_txn_checks_producer(pid_offset: int, epoch_offset: int, answer: E) -> None:
    d = Driver()
    d.init()
    d.init()
    d.add()
    result = d.coordinator.end_transaction(TXN, d.pid + pid_offset, d.epoch + epoch_offset, True, 0, d.now)
    assert result.error == answer
    assert d.state() is S.ONGOING


def test_end_txn_unknown_or_empty_id() -> None:
    d = Driver()
    assert d.coordinator.end_transaction("nope", 1, 0, True, 0, d.now).error == E.INVALID_PRODUCER_ID_MAPPING
    assert d.coordinator.end_transaction("", 1, 0, True, 0, d.now).error == E.INVALID_REQUEST


def test_commit_writes_markers_to_every_partition_then_completes() -> None:
    d = Driver()
    d.reach(S.ONGOING)
    d.add(T0, T1)
    assert d.end(True) == E.NONE
    (completion,) = d.write_markers()
    assert completion.commit and completion.partitions == frozenset({T0, T1})
    assert (completion.producer_id, completion.producer_epoch) == (d.pid, d.epoch)
    assert d.state() is S.COMPLETE_COMMIT
    assert d.coordinator.describe(TXN).partitions == frozenset()  # type: ignore[union-attr]


def test_a_marker_that_fails_is_retried_and_the_transaction_waits() -> None:
    d = Driver()
    d.reach(S.ONGOING)
    d.add(T0, T1)
    d.end(True)
    d.write_markers(failing=frozenset({T1}))
    assert d.state() is S.PREPARE_COMMIT
    assert d.coordinator.describe(TXN).partitions == frozenset({T1})  # type: ignore[union-attr]
    assert d.coordinator.next_deadline() == d.now + MARKER_RETRY_MS
    d.clock.now += MARKER_RETRY_MS
    d.coordinator.tick(d.now)
    (retry,) = d.write_markers()
    assert retry.partitions == frozenset({T1})
    assert d.state() is S.COMPLETE_COMMIT


def test_a_deleted_partition_settles_its_marker() -> None:
    d = Driver()
    d.reach(S.ONGOING)
    d.end(False)
    (completion,) = d.coordinator.take_completions()
    d.coordinator.markers_written(completion, {T0: E.UNKNOWN_TOPIC_OR_PARTITION}, d.now)
    assert d.state() is S.COMPLETE_ABORT


# --- EndTxn, transaction version 2 (v5, KIP-890 part 2) -----------------------------------------


@pytest.mark.parametrize(
    ("state", "commit", "answer", "next_state", "bumped"),
    [
        (S.ONGOING, True, E.NONE, S.COMPLETE_COMMIT, True),
        (S.ONGOING, False, E.NONE, S.COMPLETE_ABORT, True),
        (S.EMPTY, True, E.INVALID_TXN_STATE, S.EMPTY, False),
        # An abort with no partition added still ends (and bumps) under TV2.
        (S.EMPTY, False, E.NONE, S.COMPLETE_ABORT, True),
        (S.COMPLETE_COMMIT, False, E.NONE, S.COMPLETE_ABORT, True),
        (S.COMPLETE_COMMIT, True, E.INVALID_TXN_STATE, S.COMPLETE_COMMIT, False),
        (S.COMPLETE_ABORT, False, E.NONE, S.COMPLETE_ABORT, True),
        (S.COMPLETE_ABORT, True, E.INVALID_TXN_STATE, S.COMPLETE_ABORT, False),
    ],
)
def test_end_txn_v2_by_state(state: S, commit: bool, answer: E, next_state: S, bumped: bool) -> None:
    d = Driver()
    d.reach(state, version=2)
    epoch = d.epoch
    assert d.end(commit, version=2) == answer
    d.write_markers()
    assert d.state() is next_state
    assert d.epoch == epoch + (1 if bumped else 0)


@pytest.mark.parametrize(
    ("state", "commit", "answer"),
    [
        (S.PREPARE_COMMIT, True, E.CONCURRENT_TRANSACTIONS),
        (S.PREPARE_COMMIT, False, E.INVALID_TXN_STATE),
        (S.PREPARE_ABORT, False, E.CONCURRENT_TRANSACTIONS),
        (S.PREPARE_ABORT, True, E.INVALID_TXN_STATE),
    ],
)
def test_end_txn_v2_while_completing(state: S, commit: bool, answer: E) -> None:
    """Under TV2 the epoch was bumped by the EndTxn that started completing: only a retry
    from the epoch before is answered (as Kafka does); the bumped epoch itself is fenced."""
    d = Driver()
    d.reach(state, version=2)
    assert d.end(commit, version=2, epoch=d.epoch - 1) == answer
    assert d.end(commit, version=2) == E.PRODUCER_FENCED
    assert d.state() is state


def test_v2_bumps_the_epoch_each_transaction_and_markers_carry_it() -> None:
    d = Driver()
    d.init()
    for expected_epoch in (1, 2, 3):
        assert d.add(version=2) == E.NONE
        assert d.end(True, version=2) == E.NONE
        (completion,) = d.write_markers()
        assert completion.producer_epoch == expected_epoch == d.epoch


def test_v2_retry_of_a_lost_end_txn_answer_is_accepted() -> None:
    d = Driver()
    d.reach(S.ONGOING, version=2)
    old = d.epoch
    assert d.end(True, version=2) == E.NONE
    d.write_markers()
    result = d.coordinator.end_transaction(TXN, d.pid, old, True, 2, d.now)
    assert (result.error, result.producer_epoch) == (E.NONE, old + 1)
    # ... but not as an abort, and not from an older epoch.
    assert d.coordinator.end_transaction(TXN, d.pid, old, False, 2, d.now).error == E.INVALID_TXN_STATE
    assert d.coordinator.end_transaction(TXN, d.pid, old - 1, True, 2, d.now).error == E.PRODUCER_FENCED


def test_v2_epoch_overflow_moves_to_the_next_producer_id() -> None:
    d = Driver()
    d.init()
    d.coordinator._txns[TXN].producer_epoch = d.epoch = MAX_EPOCH - 1
    d.add(version=2)
    result = d.coordinator.end_transaction(TXN, d.pid, d.epoch, True, 2, d.now)
    assert (result.error, result.producer_id, result.producer_epoch) == (E.NONE, FIRST_PID + 1, 0)
    (completion,) = d.write_markers()
    assert (completion.producer_id, completion.producer_epoch) == (FIRST_PID, MAX_EPOCH)
    described = d.coordinator.describe(TXN)
    assert described is not None and (described.producer_id, described.producer_epoch) == (FIRST_PID + 1, 0)
    # The retry from the old producer id at the exhausted epoch gets the same answer.
    retry = d.coordinator.end_transaction(TXN, FIRST_PID, MAX_EPOCH - 1, True, 2, d.now)
    assert (retry.error, retry.producer_id, retry.producer_epoch) == (E.NONE, FIRST_PID + 1, 0)


# --- timeouts and expiry ------------------------------------------------------------------


# The coordinator's own abort follows the finalized transaction.version, whatever the
# client speaks: under 2 it bumps twice (the fence, then the TV2 end).
@pytest.mark.parametrize(("server_version", "version", "fenced_epoch"), [(1, 0, 1), (2, 0, 2), (2, 2, 2)])
def test_a_silent_transaction_is_aborted_at_its_timeout_and_its_producer_fenced(
    server_version: int, version: int, fenced_epoch: int
) -> None:
    d = Driver(TransactionConfig(transaction_version=server_version))
    d.reach(S.ONGOING, version=version)
    assert d.coordinator.next_deadline() == d.now + TIMEOUT_MS
    d.clock.now += TIMEOUT_MS - 1
    d.coordinator.tick(d.now)
    assert d.state() is S.ONGOING
    d.clock.now += 1
    d.coordinator.tick(d.now)
    (abort,) = d.write_markers()
    assert not abort.commit and abort.producer_epoch == fenced_epoch
    assert d.state() is S.COMPLETE_ABORT
    assert d.add() == E.PRODUCER_FENCED
    assert d.end(True, version) == E.PRODUCER_FENCED
    assert d.init() == E.NONE and d.epoch == fenced_epoch + 1


def test_an_ended_transaction_does_not_time_out() -> None:
    d = Driver()
    d.reach(S.COMPLETE_COMMIT)
    d.clock.now += TIMEOUT_MS
    d.coordinator.tick(d.now)
    assert d.coordinator.take_completions() == []
    assert d.state() is S.COMPLETE_COMMIT


def test_idle_transactional_ids_expire_with_a_tombstone() -> None:
    config = TransactionConfig(id_expiration_ms=10_000, expiration_check_interval_ms=1_000)
    d = Driver(config)
    d.reach(S.COMPLETE_COMMIT)
    d.coordinator.init_producer_id("busy", TIMEOUT_MS, None, d.now)
    d.coordinator.add_partitions("busy", FIRST_PID + 1, 0, [T0], 0, d.now)
    d.clock.now += 10_000
    d.coordinator.tick(d.now)
    assert d.state() is None
    assert d.records[-1].transactional_id == TXN and d.records[-1].value is None
    # An ongoing transaction never expires (it times out instead).
    assert d.state("busy") is S.ONGOING


# --- admin --------------------------------------------------------------------------------


def test_list_transactions_filters() -> None:
    d = Driver()
    d.reach(S.ONGOING)
    d.coordinator.init_producer_id("other", TIMEOUT_MS, None, d.now)
    listings, unknown = d.coordinator.list_transactions(["Ongoing", "Bogus"], [], -1, d.now)
    assert [(entry.transactional_id, entry.state) for entry in listings] == [(TXN, S.ONGOING)]
    assert unknown == ["Bogus"]
    by_pid, _ = d.coordinator.list_transactions([], [FIRST_PID + 1], -1, d.now)
    assert [entry.transactional_id for entry in by_pid] == ["other"]
    assert len(d.coordinator.list_transactions([], [], -1, d.now)[0]) == 2
    d.clock.now += 5
    d.coordinator.add_partitions("other", FIRST_PID + 1, 0, [T1], 0, d.now)
    # Running longer than 4 ms: only the transaction started 5 ms ago.
    older, _ = d.coordinator.list_transactions([], [], 4, d.now)
    assert [entry.transactional_id for entry in older] == [TXN]


def test_describe() -> None:
    d = Driver()
    assert d.coordinator.describe(TXN) is None
    d.reach(S.ONGOING)
    described = d.coordinator.describe(TXN)
    assert described is not None
    assert (described.state, described.timeout_ms, described.start_ms) == (S.ONGOING, TIMEOUT_MS, d.now)
    assert (described.producer_id, described.producer_epoch, described.partitions) == (FIRST_PID, 0, {T0})
