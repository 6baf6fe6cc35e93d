"""Drives the pure transaction coordinator with a fake clock into any state."""

from __future__ import annotations

import itertools

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.protocol.transaction_records import TransactionRecord
from kafka_shim.shim.coordinator.types import TopicPartition
from kafka_shim.shim.transactions.coordinator import (
    Completion,
    TransactionConfig,
    TransactionCoordinator,
)
from kafka_shim.shim.transactions.state import TxnState
from tests.helpers import FakeClock

TXN = "txn-a"
TIMEOUT_MS = 60_000
FIRST_PID = 1000
T0 = TopicPartition("t", 0)
T1 = TopicPartition("t", 1)


class Driver:
    def __init__(self, config: TransactionConfig | None = None) -> None:
        self.clock = FakeClock()
        ids = itertools.count(FIRST_PID)
        self.coordinator = TransactionCoordinator(config or TransactionConfig(), lambda: next(ids))
        self.records: list[TransactionRecord] = []
        self.coordinator.on_records = lambda: self.records.extend(self.coordinator.take_records())
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
