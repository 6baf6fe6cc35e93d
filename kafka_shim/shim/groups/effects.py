"""Carrying out a group coordinator's answer, as Kafka's CoordinatorRuntime carries out a
CoordinatorResult: its records are appended to __consumer_offsets first (under the fsync
policy), then the coordinator's changes stand, its timers are set and the requests it answers
get their replies. A write that fails puts the coordinator back as the log has it and
refuses the call with the error Kafka's coordinator answers."""

from __future__ import annotations

import itertools
import logging
from collections.abc import Callable, Collection
from typing import Any, TypeVar

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.shim.coordinator.consumer import Result
from kafka_shim.shim.coordinator.outcome import Outcome, Waiter
from kafka_shim.shim.coordinator.timers import Deadlines
from kafka_shim.shim.coordinator.types import JoinResult, SyncResult
from kafka_shim.storage.errors import StorageError
from kafka_shim.storage.offsets_log import OffsetsLog

T = TypeVar("T")

log = logging.getLogger(__name__)

# A deadline whose records could not be written is retried after this, as Kafka's
# CoordinatorTimer retries an operation scheduled with retry (its default backoff).
COORDINATOR_RETRY_BACKOFF_MS = 500


class GroupEffects:
    """The group coordinators' deadlines and waiting requests, and the one writer of their
    records. Made anew with the coordinators at each load of __consumer_offsets."""

    def __init__(
        self,
        offsets_log: OffsetsLog,
        clock: Callable[[], int],
        adopt: Callable[[Any, int], Outcome[None]],
        reload: Callable[[Collection[str]], None],
    ) -> None:
        self.offsets_log = offsets_log
        self.clock = clock
        # A consumer group whose last consumer-protocol member left becomes classic again.
        self._adopt = adopt
        # Consumer and share groups as the log has them, after a write of theirs failed.
        self._reload = reload
        self.deadlines = Deadlines()
        # Each waiting request's `respond`, and its answer should the groups be unloaded.
        self._waiting: dict[Waiter, tuple[Callable[[Any], None], Any]] = {}
        self._waiter_ids = itertools.count(1)

    def set_deadline(self, key: Any, at: int | None) -> None:
        if at is None:
            self.deadlines.cancel(key)
        else:
            self.deadlines.schedule(key, at)

    def waiter(self, respond: Callable[[T], None], unloaded: T) -> Waiter:
        """Name a request that waits for its answer: `apply` hands `respond` the reply an
        outcome brings for it, or `unloaded` if its group is unloaded first."""
        waiter = next(self._waiter_ids)
        self._waiting[waiter] = (respond, unloaded)
        return waiter

    def unload(self) -> None:
        """The groups are gone (their topic was deleted): each waiting request is answered."""
        waiting, self._waiting = self._waiting, {}
        for respond, unloaded in waiting.values():
            respond(unloaded)

    def apply(self, outcome: Outcome[T] | Result[T]) -> T:
        """Carry out a group coordinator call's outcome: its records are appended (under the
        fsync policy) before any answer goes out, its deadlines are set or cancelled, and
        waiting requests get their replies. Returns the call's own answer.

        When the append fails (a full disk): StorageError with the code Kafka's coordinator
        answers for it (`coordinator_error`), after the coordinator was put back as it was
        before the call and the requests this outcome would have answered were told."""
        if outcome.records:
            try:
                self.offsets_log.append(outcome.records, self.clock())
            except StorageError as exc:
                raise self._not_written(outcome, exc) from exc
        deadlines = self.deadlines
        for key, at in outcome.timers:
            if at is None:
                deadlines.cancel(key)
            else:
                deadlines.schedule(key, at)
        if isinstance(outcome, Outcome):
            for waiter, answer in outcome.replies:
                waiting = self._waiting.pop(waiter, None)
                if waiting is not None:
                    waiting[0](answer)
        elif outcome.downgraded is not None:  # its last consumer-protocol member left
            self.apply(self._adopt(outcome.downgraded, self.clock()))
        return outcome.response

    def apply_or(self, outcome: Outcome[T] | Result[T], refuse: Callable[[ErrorCode], T]) -> T:
        """`apply`, or the call's answer made by `refuse` from the coordinator's error when its
        records could not be written (the coordinator was put back)."""
        try:
            return self.apply(outcome)
        except StorageError as exc:
            return refuse(exc.code)

    def start_waiting(
        self,
        call: Callable[[Waiter], Outcome[None]],
        respond: Callable[[T], None],
        refuse: Callable[[ErrorCode], T],
    ) -> None:
        """Run a coordinator call whose answer comes to `respond`, now or later (JoinGroup,
        SyncGroup); one whose records could not be written is answered `refuse(code)` now, and
        `refuse(NOT_COORDINATOR)` if its group is unloaded while it waits."""
        waiter = self.waiter(respond, refuse(ErrorCode.NOT_COORDINATOR))
        try:
            self.apply(call(waiter))
        except StorageError as exc:
            self._waiting.pop(waiter, None)
            respond(refuse(exc.code))

    def _not_written(self, outcome: Outcome[T] | Result[T], exc: StorageError) -> StorageError:
        code = coordinator_error(exc.code)
        groups = sorted({record.key.group for record in outcome.records})
        if isinstance(outcome, Outcome):
            if outcome.undo is not None:
                outcome.undo()
            for waiter, answer in outcome.replies:
                waiting = self._waiting.pop(waiter, None)
                if waiting is not None:
                    waiting[0](refusal(answer, code))
        else:
            self._reload(groups)
        log.warning("__consumer_offsets write for %s failed, answered %s: %s", groups, code.name, exc.message)
        return StorageError(code, f"the group's records were not written: {exc.message}")


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


def refusal(answer: object, code: ErrorCode) -> object:
    """The error answer, in the reply's own type, for a request waiting on an outcome that
    was not carried out."""
    if isinstance(answer, JoinResult):
        return JoinResult(code, answer.member_id)
    if isinstance(answer, SyncResult):
        return SyncResult(code)
    raise TypeError(f"no refusal for a {type(answer).__name__}")
