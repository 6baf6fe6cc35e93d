"""Completing transactions: the markers of every transaction the coordinator ended
are written to its partitions (the shared `write_markers`), then the coordinator
completes it. Run after each call that may end a transaction (EndTxn, InitProducerId
fencing an open one, the timer, start-up)."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.shim.coordinator.types import TopicPartition
from kafka_shim.storage.log import LEADER_EPOCH

if TYPE_CHECKING:
    from kafka_shim.shim.broker import Broker

# The transaction log's partition leader epoch: one broker leads it forever.
COORDINATOR_EPOCH = LEADER_EPOCH

WriteMarkers = Callable[
    [Any, int, int, int, bool, Iterable[TopicPartition], int], Mapping[TopicPartition, ErrorCode]
]


def _write_markers() -> WriteMarkers:
    # The marker writer is the data path's (txndata's shim/transactions/markers.py).
    try:
        module = importlib.import_module("kafka_shim.shim.transactions.markers")
    except ModuleNotFoundError as exc:
        raise NotImplementedError(
            "ending a transaction needs kafka_shim.shim.transactions.markers (the data path), not merged yet"
        ) from exc
    write: WriteMarkers = module.write_markers
    return write


def complete_transactions(broker: Broker, now: int) -> None:
    coordinator = broker.transactions
    while completions := coordinator.take_completions():
        write_markers = _write_markers()
        for completion in completions:
            results = write_markers(
                broker,
                completion.producer_id,
                completion.producer_epoch,
                COORDINATOR_EPOCH,
                completion.commit,
                completion.partitions,
                now,
            )
            coordinator.markers_written(completion, results, now)
