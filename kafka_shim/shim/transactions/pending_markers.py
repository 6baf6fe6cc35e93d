"""Markers for partitions another broker process leads (`--process-per-broker`), kept until
that leader has written them, as Kafka's TransactionMarkerChannelManager keeps a queue per
broker: the coordinator writes the markers of the partitions its own process leads at once
(transactions.markers) and hands the others here; a sender on the network side
(shim.processes.marker_sender) asks `due` for one WriteTxnMarkers per leader, carrying every
partition of that leader, and reports the answer. A partition written (or gone: MARKER_SETTLED)
is reported back to the coordinator, which completes the transaction once none is left; one
whose leader failed to answer, or answered another error, is sent again after a backoff that
doubles up to MARKER_BACKOFF_MS[1]. Until then the transaction stays PrepareCommit /
PrepareAbort, and its producer's next InitProducerId or AddPartitionsToTxn is answered
CONCURRENT_TRANSACTIONS, as Kafka answers it.

Pure: no clock, no I/O; every call takes `now` (ms)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import NamedTuple

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.shim.coordinator.outcome import TransactionMarkers
from kafka_shim.shim.coordinator.types import TopicPartition
from kafka_shim.shim.transactions.types import MARKER_SETTLED

# The first retry of a leader's markers, and the longest wait between two (Kafka's brokers
# retry a marker request after retry.backoff.ms, 100 by default).
MARKER_BACKOFF_MS = (100, 5_000)

# One transaction's end: the same transaction re-queued by the coordinator is not sent twice.
Ending = tuple[str, int, int, bool]


def ending_of(markers: TransactionMarkers) -> Ending:
    return markers.transactional_id, markers.producer_id, markers.producer_epoch, markers.commit


@dataclass
class _Pending:
    """One transaction's markers still to be written by one leader."""

    markers: TransactionMarkers  # its partitions: those of this leader not written yet
    due_ms: int
    backoff_ms: int = 0
    in_flight: bool = False


class MarkerSend(NamedTuple):
    """One WriteTxnMarkers to `leader`: a marker per transaction, each with its partitions."""

    leader: int
    markers: tuple[TransactionMarkers, ...]


class PendingMarkers:
    def __init__(self, node_id: int, leader_of: Callable[[TopicPartition], int]) -> None:
        self.node_id = node_id
        self._leader_of = leader_of
        self._pending: dict[tuple[int, Ending], _Pending] = {}
        # Called when markers are added: the sender wakes to send them (set by it).
        self.added: Callable[[], None] = lambda: None

    def split(self, markers: TransactionMarkers, now: int) -> frozenset[TopicPartition]:
        """The partitions of `markers` this process leads (to be written here, now); the others
        are kept for their leaders. Partitions already kept for the same transaction's end are
        not added twice (the coordinator re-queues the unwritten ones while they are sent)."""
        local: list[TopicPartition] = []
        elsewhere: dict[int, set[TopicPartition]] = {}
        for partition in markers.partitions:
            leader = self._leader_of(partition)
            if leader == self.node_id:
                local.append(partition)
            else:
                elsewhere.setdefault(leader, set()).add(partition)
        ending = ending_of(markers)
        for leader, partitions in elsewhere.items():
            kept = self._pending.get((leader, ending))
            if kept is None:
                mine = markers._replace(partitions=frozenset(partitions))
                self._pending[leader, ending] = _Pending(mine, now)
            elif not partitions <= kept.markers.partitions:
                kept.markers = kept.markers._replace(partitions=kept.markers.partitions | partitions)
        if elsewhere:
            self.added()
        return frozenset(local)

    def due(self, now: int) -> list[MarkerSend]:
        """The requests to send now, one per leader; their markers are in flight until
        `answered` or `failed` says what became of them."""
        by_leader: dict[int, list[TransactionMarkers]] = {}
        for (leader, _), kept in self._pending.items():
            if not kept.in_flight and kept.due_ms <= now:
                kept.in_flight = True
                by_leader.setdefault(leader, []).append(kept.markers)
        return [MarkerSend(leader, tuple(markers)) for leader, markers in by_leader.items()]

    def answered(
        self, send: MarkerSend, results: Mapping[Ending, Mapping[TopicPartition, ErrorCode]], now: int
    ) -> list[tuple[TransactionMarkers, dict[TopicPartition, ErrorCode]]]:
        """The leader answered `send` (per transaction's end, each partition's error; one not
        answered counts as failed). Returns, per transaction, the partitions settled, to report
        to the coordinator; the others are sent again after the backoff."""
        settled_by: list[tuple[TransactionMarkers, dict[TopicPartition, ErrorCode]]] = []
        for sent in send.markers:
            ending = ending_of(sent)
            kept = self._pending.get((send.leader, ending))
            answers = results.get(ending, {})
            settled = {tp: answers[tp] for tp in sent.partitions if answers.get(tp) in MARKER_SETTLED}
            if settled:
                settled_by.append((sent._replace(partitions=frozenset(settled)), settled))
            if kept is None:
                continue
            left = kept.markers.partitions - settled.keys()
            if not left:
                del self._pending[send.leader, ending]
                continue
            kept.markers = kept.markers._replace(partitions=left)
            kept.in_flight = False
            if left & sent.partitions:  # some sent were refused: wait before the next try
                self._back_off(kept, now)
            else:  # only partitions added while it was sent: they go at once
                kept.due_ms = now
        return settled_by

    def failed(self, send: MarkerSend, now: int) -> None:
        """The leader did not answer `send`: every marker in it is sent again after the backoff."""
        for sent in send.markers:
            kept = self._pending.get((send.leader, ending_of(sent)))
            if kept is not None:
                kept.in_flight = False
                self._back_off(kept, now)

    def next_due(self) -> int | None:
        """When the earliest marker not in flight is due (None: none is waiting)."""
        return min((k.due_ms for k in self._pending.values() if not k.in_flight), default=None)

    def waiting(self) -> dict[int, frozenset[TopicPartition]]:
        """Leader -> the partitions whose markers it has not written yet (in flight or not)."""
        out: dict[int, frozenset[TopicPartition]] = {}
        for (leader, _), kept in self._pending.items():
            out[leader] = out.get(leader, frozenset()) | kept.markers.partitions
        return out

    @staticmethod
    def _back_off(kept: _Pending, now: int) -> None:
        first, longest = MARKER_BACKOFF_MS
        kept.backoff_ms = min(longest, kept.backoff_ms * 2) if kept.backoff_ms else first
        kept.due_ms = now + kept.backoff_ms
