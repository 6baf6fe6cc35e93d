"""Drives the pure transaction coordinator with a fake clock into any state: its outcomes are
carried out by the transaction service's writer into a list of records, and the markers each
brings are held for the test to write (`write_markers`)."""

from __future__ import annotations

import itertools
from collections.abc import Sequence

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.protocol.transaction_records import TransactionRecord
from kafka_shim.shim.coordinator.types import TopicPartition
from kafka_shim.shim.transactions.coordinator import Completion, TransactionConfig
from kafka_shim.shim.transactions.service import TransactionService
from kafka_shim.shim.transactions.state import TransactionMetadata, TxnState
from kafka_shim.storage.errors import StorageError
from kafka_shim.storage.transaction_log import TRANSACTION_TOPIC
from tests.helpers import FakeClock

TXN = "txn-a"
TIMEOUT_MS = 60_000
FIRST_PID = 1000
T0 = TopicPartition("t", 0)
T1 = TopicPartition("t", 1)


class RecordList:
    """`__transaction_state` as a list: every append kept, none fails unless `failing` names
    the storage error every append then raises (a full disk: KAFKA_STORAGE_ERROR)."""

    name = TRANSACTION_TOPIC

    def __init__(self) -> None:
        self.records: list[TransactionRecord] = []
        self.failing: ErrorCode | None = None

    def append(self, records: Sequence[TransactionRecord], now_ms: int) -> None:
        if self.failing is not None:
            raise StorageError(self.failing, "the test's log refuses every append")
        self.records.extend(records)


class HeldMarkers(TransactionService):
    """The transaction service, its markers held until the test writes them."""

    def __init__(self, config: TransactionConfig, clock: FakeClock, log: RecordList) -> None:
        ids = itertools.count(FIRST_PID)
        self.held: list[Completion] = []

        def unwritable(markers: Completion, now: int) -> dict[TopicPartition, ErrorCode]:
            raise AssertionError("markers are held, not written")

        def failed(kind: str, exc: Exception) -> None:
            raise exc

        super().__init__(
            config,
            lambda: next(ids),
            log,
            lambda: clock.now,
            unwritable,
            failed,
        )

    def _complete(self, markers: Completion) -> None:
        """Held, not written: the test writes them (`Driver.write_markers`)."""
        self.held.append(markers)

    def take_completions(self) -> list[Completion]:
        taken = list(self.held)
        self.held.clear()
        return taken

    @property
    def _txns(self) -> dict[str, TransactionMetadata]:
        return self.coordinator._txns


class Driver:
    def __init__(self, config: TransactionConfig | None = None) -> None:
        self.clock = FakeClock()
        self.log = RecordList()
        self.records = self.log.records
        self.coordinator = HeldMarkers(config or TransactionConfig(), self.clock, self.log)
        self.pid = -1
        self.epoch = -1

    @property
    def now(self) -> int:
        return self.clock.now

    def state(self, txn: str = TXN) -> TxnState | None:
        described = self.coordinator.describe(txn)
        return None if described is None else described.state

    def init(self, txn: str = TXN, expected: tuple[int, int] | None = None) -> ErrorCode:
        result = self.coordinator.init_producer_id(txn, TIMEOUT_MS, expected, self.now)
        if result.error == ErrorCode.NONE:
            self.pid, self.epoch = result.producer_id, result.producer_epoch
        return result.error

    def add(self, *partitions: TopicPartition, version: int = 0, epoch: int | None = None) -> ErrorCode:
        return self.coordinator.add_partitions(
            TXN, self.pid, self.epoch if epoch is None else epoch, partitions or (T0,), version, self.now
        )

    def end(self, commit: bool, version: int = 0, epoch: int | None = None) -> ErrorCode:
        result = self.coordinator.end_transaction(
            TXN, self.pid, self.epoch if epoch is None else epoch, commit, version, self.now
        )
        if result.error == ErrorCode.NONE and version >= 2:
            self.pid, self.epoch = result.producer_id, result.producer_epoch
        return result.error

    def write_markers(self, failing: frozenset[TopicPartition] = frozenset()) -> list[Completion]:
        """Write every queued completion's markers (all succeed but `failing`)."""
        completions = self.coordinator.take_completions()
        for completion in completions:
            results = {
                tp: ErrorCode.NOT_LEADER_OR_FOLLOWER if tp in failing else ErrorCode.NONE
                for tp in completion.partitions
            }
            self.coordinator.markers_written(completion, results, self.now)
        return completions

    def reach(self, state: TxnState, version: int = 0) -> None:
        """Init, then whatever `state` takes (markers written only for Complete*)."""
        assert self.init() == ErrorCode.NONE
        if state is TxnState.EMPTY:
            return
        assert self.add(version=version) == ErrorCode.NONE
        if state is TxnState.ONGOING:
            return
        commit = state in (TxnState.PREPARE_COMMIT, TxnState.COMPLETE_COMMIT)
        assert self.end(commit, version) == ErrorCode.NONE
        if state in (TxnState.COMPLETE_COMMIT, TxnState.COMPLETE_ABORT):
            self.write_markers()
        else:
            self.coordinator.take_completions()  # markers not written yet
        assert self.state() is state
