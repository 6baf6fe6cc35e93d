"""The sender of a broker process's transaction markers to the partitions other processes lead:
one WriteTxnMarkers per leader, over that leader's Kafka listener, as Kafka's transaction
coordinator sends them (TransactionMarkerChannelManager). What to send and when, and what
became of it, is shim.transactions.pending_markers; this only sends, waits and reports the
partitions written to the transaction coordinator, which completes the transaction once every
partition has its marker."""

from __future__ import annotations

import logging
import math
from collections.abc import Callable, Mapping
from typing import Any

import trio

from kafka_shim.protocol.errors import ErrorCode, error_code_of
from kafka_shim.protocol.messages.write_txn_markers import API as WRITE_TXN_MARKERS
from kafka_shim.shim.coordinator.types import TopicPartition
from kafka_shim.shim.processes.peer import Peer, PeerCallError, PeerConnections
from kafka_shim.shim.transactions.markers import COORDINATOR_EPOCH
from kafka_shim.shim.transactions.pending_markers import Ending, MarkerSend, PendingMarkers, ending_of
from kafka_shim.shim.transactions.service import TransactionService
from kafka_shim.shim.transactions.types import MARKER_SETTLED

log = logging.getLogger("kafka_shim.processes")

VERSION = 1  # WriteTxnMarkers v1: flexible, served by every release kafka-shim emulates
TIMEOUT_S = 5.0  # the longest one leader's answer is waited for before trying again


class MarkerSender:
    def __init__(
        self,
        pending: PendingMarkers,
        transactions: Callable[[], TransactionService],
        peer: Callable[[int], Peer | None],
        clock: Callable[[], int],
        answered: Callable[[], None],
        connections: PeerConnections,
    ) -> None:
        """`peer`: how to reach a leader's Kafka listener, over `connections` (kept between
        sends); `answered` runs after a report to the coordinator (the server's timers may have
        a sooner deadline; an EndTxn may wait for its transaction, shim.processes.transaction_ends)."""
        self._connections = connections
        self._pending = pending
        self._transactions = transactions
        self._peer = peer
        self._clock = clock
        self._answered = answered
        self._wake = trio.Event()

    def _added(self) -> None:
        self._wake.set()

    async def run(self) -> None:
        """Send what is due, then sleep until the next is due or markers are added."""
        self._pending.added = self._added
        async with trio.open_nursery() as nursery:
            while True:
                self._wake = trio.Event()
                for send in self._pending.due(self._clock()):
                    nursery.start_soon(self._send, send)
                at = self._pending.next_due()
                timeout = math.inf if at is None else max(0.0, (at - self._clock()) / 1000)
                with trio.move_on_after(timeout):
                    await self._wake.wait()

    async def _send(self, send: MarkerSend) -> None:
        peer = self._peer(send.leader)
        try:
            if peer is None:
                raise PeerCallError(f"no listener of broker {send.leader} lets a broker process in")
            answer = await self._connections.call(peer, WRITE_TXN_MARKERS, VERSION, request(send), TIMEOUT_S)
        except PeerCallError as exc:
            log.warning("transaction markers for broker %d not written yet: %s", send.leader, exc)
            self._pending.failed(send, self._clock())
            self._wake.set()
            return
        now, answers = self._clock(), results(send, answer)
        refused = sorted(
            {code.name for codes in answers.values() for code in codes.values() if code not in MARKER_SETTLED}
        )
        if refused:  # sent again after the backoff (CLUSTER_AUTHORIZATION_FAILED: see super.users)
            log.warning(
                "broker %d refused transaction markers (%s): trying again", send.leader, ", ".join(refused)
            )
        for markers, settled in self._pending.answered(send, answers, now):
            self._transactions().markers_answered(markers, settled, now)
        self._answered()
        self._wake.set()


def request(send: MarkerSend) -> dict[str, Any]:
    """The WriteTxnMarkers of `send`: a marker per transaction, its partitions by topic."""
    markers = []
    for m in send.markers:
        topics: dict[str, list[int]] = {}
        for tp in sorted(m.partitions):
            topics.setdefault(tp.topic, []).append(tp.partition)
        markers.append(
            {
                "producer_id": m.producer_id,
                "producer_epoch": m.producer_epoch,
                "transaction_result": m.commit,
                "topics": [{"name": name, "partition_indexes": ids} for name, ids in topics.items()],
                "coordinator_epoch": COORDINATOR_EPOCH,
            }
        )
    return {"markers": markers}


def results(send: MarkerSend, answer: Any) -> dict[Ending, Mapping[TopicPartition, ErrorCode]]:
    """Each transaction's partition errors, by the order of the answer's markers (one per
    marker sent, as Kafka answers them)."""
    out: dict[Ending, Mapping[TopicPartition, ErrorCode]] = {}
    for sent, marker in zip(send.markers, answer.markers, strict=False):
        out[ending_of(sent)] = {
            TopicPartition(topic.name, p.partition_index): error_code_of(p.error_code)
            for topic in marker.topics
            for p in topic.partitions
        }
    return out
