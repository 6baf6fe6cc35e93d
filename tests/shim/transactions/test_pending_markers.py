"""The markers a broker process keeps for partitions other processes lead (PendingMarkers),
driven with a fake clock: what is sent when, what an answer or a silence does, and the
transaction service over it (EndTxn answered once PrepareCommit is written, the producer told
CONCURRENT_TRANSACTIONS until every leader has written its markers)."""

from __future__ import annotations

import itertools

import pytest

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.shim.coordinator.outcome import TransactionMarkers
from kafka_shim.shim.coordinator.types import TopicPartition
from kafka_shim.shim.transactions.coordinator import MARKER_RETRY_MS, TransactionConfig
from kafka_shim.shim.transactions.pending_markers import (
    MARKER_BACKOFF_MS,
    MarkerSend,
    PendingMarkers,
    ending_of,
)
from kafka_shim.shim.transactions.service import TransactionService
from kafka_shim.shim.transactions.state import TxnState
from tests.helpers import FakeClock
from tests.shim.transactions.driver import RecordList

HERE, THERE, YONDER = 0, 1, 2
L0, L1 = TopicPartition("t", 0), TopicPartition("t", 1)  # led here
R0, R1 = TopicPartition("t", 2), TopicPartition("t", 3)  # led by THERE
Y0 = TopicPartition("u", 0)  # led by YONDER
LEADERS = {L0: HERE, L1: HERE, R0: THERE, R1: THERE, Y0: YONDER}
NOW = 1_000


def markers(
    *partitions: TopicPartition, txn: str = "a", epoch: int = 3, commit: bool = True
) -> TransactionMarkers:
    return TransactionMarkers(txn, 77, epoch, commit, frozenset(partitions))


def pending() -> PendingMarkers:
    return PendingMarkers(HERE, LEADERS.__getitem__)


def answer(
    send: MarkerSend, **codes: ErrorCode
) -> dict[tuple[str, int, int, bool], dict[TopicPartition, ErrorCode]]:
    """Every partition of `send` answered NONE, but those named (by `t2=`...) as given."""
    return {
        ending_of(m): {tp: codes.get(f"{tp.topic}{tp.partition}", ErrorCode.NONE) for tp in m.partitions}
        for m in send.markers
    }


def test_the_partitions_led_here_are_written_here_the_others_wait_for_their_leaders() -> None:
    kept = pending()
    woken = []
    kept.added = lambda: woken.append(True)
    assert kept.split(markers(L0, L1), NOW) == {L0, L1}
    assert kept.next_due() is None and not woken  # nothing for another process
    assert kept.split(markers(L0, R0, R1, Y0), NOW) == {L0}
    assert woken and kept.waiting() == {THERE: {R0, R1}, YONDER: {Y0}}
    sends = sorted(kept.due(NOW))
    # One request per leader, carrying every partition of that leader.
    assert sends == [
        MarkerSend(THERE, (markers(R0, R1),)),
        MarkerSend(YONDER, (markers(Y0),)),
    ]
    assert kept.due(NOW + 10_000) == []  # in flight: not sent twice
    assert kept.next_due() is None


def test_transactions_to_one_leader_share_its_request() -> None:
    kept = pending()
    kept.split(markers(R0, txn="a"), NOW)
    kept.split(markers(R1, txn="b", commit=False), NOW)
    (send,) = kept.due(NOW)
    assert send.leader == THERE and {m.transactional_id for m in send.markers} == {"a", "b"}


@pytest.mark.parametrize(
    ("code", "settled"),
    [
        (ErrorCode.NONE, True),
        (ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, True),  # the partition is gone
        (ErrorCode.INVALID_PRODUCER_EPOCH, True),  # a newer producer wrote there
        (ErrorCode.NOT_LEADER_OR_FOLLOWER, False),
        (ErrorCode.KAFKA_STORAGE_ERROR, False),
        (ErrorCode.TRANSACTION_COORDINATOR_FENCED, False),
    ],
)
def test_an_answer_settles_a_partition_or_sends_it_again_after_the_backoff(
    code: ErrorCode, settled: bool
) -> None:
    kept = pending()
    kept.split(markers(R0, R1), NOW)
    (send,) = kept.due(NOW)
    reported = kept.answered(send, answer(send, t2=code), NOW + 5)
    settled_parts = {R1, R0} if settled else {R1}
    assert reported == [
        (markers(*settled_parts), {tp: (code if tp == R0 else ErrorCode.NONE) for tp in settled_parts})
    ]
    if settled:
        assert kept.waiting() == {} and kept.next_due() is None
    else:
        assert kept.waiting() == {THERE: {R0}}
        assert kept.next_due() == NOW + 5 + MARKER_BACKOFF_MS[0]
        assert kept.due(NOW + 5 + MARKER_BACKOFF_MS[0] - 1) == []
        assert kept.due(NOW + 5 + MARKER_BACKOFF_MS[0]) == [MarkerSend(THERE, (markers(R0),))]


def test_a_silent_leader_is_asked_again_backing_off_to_the_longest_wait() -> None:
    kept = pending()
    kept.split(markers(R0), NOW)
    now, waits = NOW, []
    for _ in range(8):
        (send,) = kept.due(now)
        kept.failed(send, now)
        due = kept.next_due()
        assert due is not None
        waits.append(due - now)
        now = due
    first, longest = MARKER_BACKOFF_MS
    assert waits == [min(longest, first * 2**n) for n in range(8)]
    (send,) = kept.due(now)
    assert kept.answered(send, answer(send), now) == [(markers(R0), {R0: ErrorCode.NONE})]
    assert kept.waiting() == {}


def test_the_same_end_queued_again_while_it_is_sent_is_not_sent_twice() -> None:
    kept = pending()
    kept.split(markers(R0), NOW)
    (send,) = kept.due(NOW)
    # The coordinator's markers deadline queues the unwritten partitions again meanwhile.
    assert kept.split(markers(L0, R0), NOW + MARKER_RETRY_MS) == {L0}
    assert kept.due(NOW + MARKER_RETRY_MS) == []
    # A partition added to the same end while it is sent goes once the answer is in.
    kept.split(markers(R0, R1), NOW + MARKER_RETRY_MS)
    kept.answered(send, answer(send), NOW + MARKER_RETRY_MS + 1)
    assert kept.due(NOW + MARKER_RETRY_MS + 1) == [MarkerSend(THERE, (markers(R1),))]


def test_a_marker_missing_from_the_answer_is_sent_again() -> None:
    kept = pending()
    kept.split(markers(R0, txn="a"), NOW)
    kept.split(markers(R1, txn="b"), NOW)
    (send,) = kept.due(NOW)
    half = {ending_of(markers(R0, txn="a")): {R0: ErrorCode.NONE}}
    assert kept.answered(send, half, NOW) == [(markers(R0, txn="a"), {R0: ErrorCode.NONE})]
    assert kept.waiting() == {THERE: {R1}} and kept.next_due() == NOW + MARKER_BACKOFF_MS[0]


# --- the transaction service over it -------------------------------------------------------


class Service:
    """A transaction service whose markers are written here for HERE's partitions, and wait in
    PendingMarkers for the others, as a broker process wires it (transactions.kept)."""

    def __init__(self) -> None:
        self.clock = FakeClock(NOW)
        self.kept = pending()
        self.written: list[TopicPartition] = []
        self.log = RecordList()
        ids = itertools.count(500)

        def write_here_or_send(m: TransactionMarkers, now: int) -> dict[TopicPartition, ErrorCode]:
            here = self.kept.split(m, now)
            self.written += sorted(here)
            return dict.fromkeys(here, ErrorCode.NONE)

        def failed(kind: str, exc: Exception) -> None:
            raise exc

        self.service = TransactionService(
            TransactionConfig(), lambda: next(ids), self.log, self.clock, write_here_or_send, failed
        )

    def state(self) -> TxnState:
        described = self.service.describe("tx")
        assert described is not None
        return described.state

    def init(self) -> tuple[ErrorCode, int, int]:
        found = self.service.init_producer_id("tx", 60_000, None, self.clock.now)
        return found.error, found.producer_id, found.producer_epoch

    def tick(self, ms: int) -> None:
        self.clock.now += ms
        self.service.tick(self.clock.now)

    def deliver(self, send: MarkerSend, **codes: ErrorCode) -> None:
        now = self.clock.now
        for m, settled in self.kept.answered(send, answer(send, **codes), now):
            self.service.markers_answered(m, settled, now)


def test_end_txn_is_answered_once_prepared_and_the_producer_waits_for_the_other_leaders() -> None:
    s = Service()
    error, producer_id, epoch = s.init()
    assert error == ErrorCode.NONE
    tv0 = 0
    assert (
        s.service.add_partitions("tx", producer_id, epoch, [L0, R0, Y0], tv0, s.clock.now) == ErrorCode.NONE
    )
    ended = s.service.end_transaction("tx", producer_id, epoch, True, tv0, s.clock.now)
    assert ended.error == ErrorCode.NONE  # answered: PrepareCommit is written
    assert s.written == [L0] and s.state() is TxnState.PREPARE_COMMIT
    # Meanwhile the producer is told to retry, as Kafka tells it.
    assert s.init()[0] == ErrorCode.CONCURRENT_TRANSACTIONS
    assert s.service.add_partitions("tx", producer_id, epoch, [L1], tv0, s.clock.now) == (
        ErrorCode.CONCURRENT_TRANSACTIONS
    )
    sends = {send.leader: send for send in s.kept.due(s.clock.now)}
    assert set(sends) == {THERE, YONDER}
    # The coordinator's markers deadline fires while they are sent: nothing is sent twice.
    s.tick(MARKER_RETRY_MS)
    assert s.kept.due(s.clock.now) == [] and s.written == [
        L0,
    ]
    s.deliver(sends[THERE])
    assert s.state() is TxnState.PREPARE_COMMIT  # YONDER has not answered
    s.kept.failed(sends[YONDER], s.clock.now)  # it did not answer: asked again after the backoff
    s.tick(MARKER_BACKOFF_MS[0])
    (again,) = s.kept.due(s.clock.now)
    s.deliver(again)
    assert s.state() is TxnState.COMPLETE_COMMIT
    assert s.init() == (ErrorCode.NONE, producer_id, epoch + 1)


def test_a_transaction_found_preparing_at_start_sends_its_markers_to_their_leaders() -> None:
    """A broker process restarted between PrepareCommit and CompleteCommit: the coordinator
    loads `__transaction_state` and writes the markers again, its own partitions at once and
    the others' through their leaders, then completes."""
    before = Service()
    _, producer_id, epoch = before.init()
    before.service.add_partitions("tx", producer_id, epoch, [L0, R0], 0, before.clock.now)
    before.service.end_transaction("tx", producer_id, epoch, True, 0, before.clock.now)
    after = Service()
    after.service.load(before.log.records, after.clock.now)
    assert after.state() is TxnState.PREPARE_COMMIT
    assert after.written == [L0] and after.kept.waiting() == {THERE: {R0}}
    (send,) = after.kept.due(after.clock.now)
    after.deliver(send)
    assert after.state() is TxnState.COMPLETE_COMMIT
