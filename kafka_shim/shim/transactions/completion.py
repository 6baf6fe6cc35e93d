"""Completing transactions: the markers of every transaction the coordinator ended
are written to its partitions (the shared `write_markers`), then the coordinator
completes it. Run after each call that may end a transaction (EndTxn, InitProducerId
fencing an open one, the timer, start-up)."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Protocol

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.shim.transactions.markers import MarkerWriter, write_markers
from kafka_shim.storage.errors import StorageError
from kafka_shim.storage.log import LEADER_EPOCH

if TYPE_CHECKING:
    from kafka_shim.shim.timer_failures import TimerFailures
    from kafka_shim.shim.transactions.coordinator import TransactionCoordinator


class CompletingBroker(MarkerWriter, Protocol):
    """What completing transactions needs of the broker (shim.broker.Broker is one), named here
    so that the broker and this module do not import each other."""

    @property
    def transactions(self) -> TransactionCoordinator: ...

    @property
    def timer_failures(self) -> TimerFailures: ...


log = logging.getLogger(__name__)

# The transaction log's partition leader epoch: one broker leads it forever.
COORDINATOR_EPOCH = LEADER_EPOCH


def complete_transactions(broker: CompletingBroker, now: int) -> None:
    """A completion whose markers or record cannot be written (a full disk; or anything else
    raised, such as a timestamp a marker cannot hold) is retried by the coordinator's markers
    deadline; the others go on. Nothing raises out of here: it runs on the event loop, from
    the timer and after EndTxn."""
    coordinator = broker.transactions
    while completions := coordinator.take_completions():
        for completion in completions:
            try:
                results = write_markers(
                    broker,
                    completion.producer_id,
                    completion.producer_epoch,
                    COORDINATOR_EPOCH,
                    completion.commit,
                    completion.partitions,
                    now,
                )
            except Exception as exc:  # every marker is tried again, as a failed write is
                broker.timer_failures.failed("transaction markers", exc)
                results = dict.fromkeys(completion.partitions, ErrorCode.UNKNOWN_SERVER_ERROR)
            try:
                coordinator.markers_written(completion, results, now)
            except StorageError as exc:
                log.warning("transaction %s not completed yet: %s", completion.transactional_id, exc.message)
            except Exception as exc:  # put back by the coordinator, its markers retried
                broker.timer_failures.failed("transaction markers", exc)
