"""The one writer of coordinators' records, as Kafka's CoordinatorRuntime carries out a
CoordinatorResult. Every coordinator (classic and consumer groups, share groups, share
partitions' state, transactions) answers an `Outcome` (coordinator/outcome.py); `EffectWriter`
carries it out: its records are appended to the coordinator's internal topic first (under the
fsync policy), then its changes stand, its deadlines are set, the requests it answers get their
replies and its transaction markers are written. A write that fails puts the coordinator back as
the log has it (the outcome's `undo`) and refuses the call with the error Kafka's coordinator
answers (`coordinator_error`).

One class, one instance per internal topic, as Kafka runs one runtime per coordinator: the
group service's (groups.effects.GroupEffects, over __consumer_offsets, with the waiting
requests), the share partitions' (over __share_group_state, their lock deadlines kept with the
groups'), and the transaction service's (over __transaction_state)."""

from __future__ import annotations

import logging
from collections.abc import Callable, Hashable, Sequence
from typing import Any, Protocol, TypeVar

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.shim.coordinator.outcome import Outcome, TransactionMarkers, Waiter
from kafka_shim.shim.coordinator.timers import Deadlines
from kafka_shim.storage.errors import StorageError

T = TypeVar("T")

log = logging.getLogger(__name__)

# A deadline whose records could not be written is retried after this, as Kafka's
# CoordinatorTimer retries an operation scheduled with retry (its default backoff).
COORDINATOR_RETRY_BACKOFF_MS = 500


class CoordinatorLog(Protocol):
    """An internal topic a coordinator writes (storage's OffsetsLog, TransactionLog,
    ShareStateLog): durable under the fsync policy when `append` returns."""

    name: str

    def append(self, records: Sequence[Any], now_ms: int) -> None: ...


# Writes one transaction's markers and carries out what the coordinator then answers (the
# transaction completed, or its markers retried): transactions.service.
MarkerStep = Callable[[TransactionMarkers], None]


class EffectWriter:
    """The one writer of a coordinator's internal-topic records, and the keeper of its
    deadlines. `apply` carries out an outcome; `fire_due` fires the deadlines due and carries
    out what each answers, retrying after `retry_backoff_ms` one whose records were not written."""

    def __init__(
        self,
        internal_log: CoordinatorLog,
        clock: Callable[[], int],
        *,
        retry_backoff_ms: int = COORDINATOR_RETRY_BACKOFF_MS,
        set_deadline: Callable[[Hashable, int | None], None] | None = None,
        markers: MarkerStep | None = None,
    ) -> None:
        self.internal_log = internal_log
        self.clock = clock
        self.retry_backoff_ms = retry_backoff_ms
        self.deadlines = Deadlines()
        # Where the outcome's deadlines go: these deadlines, unless another writer keeps them
        # (share partitions' lock deadlines are kept with their groups').
        self._set_deadline = set_deadline or self.set_deadline
        self._markers = markers

    def set_deadline(self, key: Hashable, at: int | None) -> None:
        if at is None:
            self.deadlines.cancel(key)
        else:
            self.deadlines.schedule(key, at)

    def apply(self, outcome: Outcome[T], now: int | None = None) -> T:
        """Carry out a coordinator call's outcome: its records are appended (under the fsync
        policy) before any answer goes out, its deadlines are set or cancelled, waiting
        requests get their replies, its transaction markers are written. Returns the call's
        own answer.

        When the append fails (a full disk): StorageError with the code Kafka's coordinator
        answers for it (`coordinator_error`), after the coordinator was put back as it was
        before the call (`undo`) and the requests this outcome would have answered were told.
        Anything else the append raises (a record that cannot be encoded) is raised as it is,
        after the same putting back."""
        if outcome.records:
            try:
                # `now`: the call's own time, when its caller has it (a clock read less per commit).
                self.internal_log.append(outcome.records, self.clock() if now is None else now)
            except Exception as exc:
                raise self._not_written(outcome, exc) from exc
        set_deadline = self._set_deadline
        for key, at in outcome.timers:
            set_deadline(key, at)
        if outcome.replies:
            self._reply(outcome.replies)
        for markers in outcome.markers:
            assert self._markers is not None, "an outcome with markers to a writer that writes none"
            self._markers(markers)
        return outcome.response

    def apply_or(self, outcome: Outcome[T], refuse: Callable[[ErrorCode], T]) -> T:
        """`apply`, or the call's answer made by `refuse` from the coordinator's error when its
        records could not be written (the coordinator was put back)."""
        try:
            return self.apply(outcome)
        except StorageError as exc:
            return refuse(exc.code)

    def fire_due(self, now: int, fire: Callable[[Hashable, int], object]) -> None:
        """Fire every deadline due by `now` (`fire` carries out what it answers). One whose
        records cannot be written fires again `retry_backoff_ms` later; the first error is
        raised once the others have fired, so one bad deadline neither stops the rest nor
        spins the loop."""
        failed: list[Exception] = []

        def fire_or_retry(key: Hashable, now: int) -> None:
            try:
                fire(key, now)
            except Exception as exc:
                self.deadlines.schedule(key, now + self.retry_backoff_ms)
                failed.append(exc)

        self.deadlines.fire_due(now, fire_or_retry)
        if failed:
            raise failed[0]

    def _reply(self, replies: tuple[tuple[Waiter, object], ...]) -> None:
        raise TypeError("replies to a writer that keeps no waiting requests")

    def _refuse_replies(self, outcome: Outcome[Any], code: ErrorCode) -> None:
        """The requests an outcome not carried out would have answered are told `code`."""

    def _named(self, outcome: Outcome[Any]) -> str:
        """What the log line of a failed write names."""
        return f"{len(outcome.records)} records"

    def _put_back(self, outcome: Outcome[Any]) -> None:
        """The coordinator as it was before the call whose records were not written."""
        if outcome.undo is not None:
            outcome.undo()

    def _not_written(self, outcome: Outcome[Any], exc: Exception) -> Exception:
        self._put_back(outcome)
        if not isinstance(exc, StorageError):
            return exc
        code = coordinator_error(exc.code)
        self._refuse_replies(outcome, code)
        log.warning(
            "%s write for %s failed, answered %s: %s",
            self.internal_log.name,
            self._named(outcome),
            code.name,
            exc.message,
        )
        return StorageError(code, f"the coordinator's records were not written: {exc.message}")


def coordinator_error(code: ErrorCode) -> ErrorCode:
    """The error a coordinator answers when its records could not be appended: Kafka's
    GroupCoordinatorService / CoordinatorRuntime (and the older GroupMetadataManager and
    TransactionStateManager) map KafkaStorageException and NotLeaderOrFollower to
    NOT_COORDINATOR, UnknownTopicOrPartition and NotEnoughReplicas to
    COORDINATOR_NOT_AVAILABLE, record-too-large to UNKNOWN_SERVER_ERROR."""
    if code in (ErrorCode.KAFKA_STORAGE_ERROR, ErrorCode.NOT_LEADER_OR_FOLLOWER):
        return ErrorCode.NOT_COORDINATOR
    if code in (ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, ErrorCode.NOT_ENOUGH_REPLICAS):
        return ErrorCode.COORDINATOR_NOT_AVAILABLE
    if code in (ErrorCode.MESSAGE_TOO_LARGE, ErrorCode.RECORD_LIST_TOO_LARGE, ErrorCode.INVALID_FETCH_SIZE):
        return ErrorCode.UNKNOWN_SERVER_ERROR
    return code
