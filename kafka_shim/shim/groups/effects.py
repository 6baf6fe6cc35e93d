"""The group coordinators' writer (shim.effects.EffectWriter over __consumer_offsets) with what
only groups need: requests waiting for an answer given later (JoinGroup, SyncGroup), a KIP-848
or share group's `Outcome` put back by replaying its groups from the log, and a consumer group
handed back to the classic coordinator (KIP-848's downgrade)."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Collection
from typing import Any, TypeVar

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.shim.coordinator.outcome import Outcome, Waiter
from kafka_shim.shim.coordinator.types import JoinResult, SyncResult
from kafka_shim.shim.effects import COORDINATOR_RETRY_BACKOFF_MS, EffectWriter, coordinator_error
from kafka_shim.storage.errors import StorageError
from kafka_shim.storage.offsets_log import OffsetsLog

# Re-exported: the group service and the broker name them from here.
__all__ = ["COORDINATOR_RETRY_BACKOFF_MS", "GroupEffects", "coordinator_error", "refusal"]

T = TypeVar("T")


class GroupEffects(EffectWriter):
    """The group coordinators' writer of __consumer_offsets, their deadlines and waiting
    requests. Made anew with the coordinators at each load of __consumer_offsets."""

    def __init__(
        self,
        offsets_log: OffsetsLog,
        clock: Callable[[], int],
        adopt: Callable[[Any, int], Outcome[None]],
        reload: Callable[[Collection[str]], None],
    ) -> None:
        super().__init__(offsets_log, clock)
        # A consumer group whose last consumer-protocol member left becomes classic again.
        self._adopt = adopt
        # Consumer and share groups as the log has them, after a write of theirs failed.
        self._reload = reload
        # Each waiting request's `respond`, and its answer should the groups be unloaded.
        self._waiting: dict[Waiter, tuple[Callable[[Any], None], Any]] = {}
        self._waiter_ids = itertools.count(1)

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

    def apply(self, outcome: Outcome[T], now: int | None = None) -> T:
        """EffectWriter.apply; then a consumer group whose last consumer-protocol member left
        goes to the classic coordinator (KIP-848's downgrade), its records written first."""
        response = EffectWriter.apply(self, outcome, now)  # not super(): a commit each
        if outcome.downgraded is not None:
            self.apply(self._adopt(outcome.downgraded, self.clock()))
        return response

    def _named(self, outcome: Outcome[Any]) -> str:
        return str(sorted({record.key.group for record in outcome.records}))  # ['g', ...]

    def _put_back(self, outcome: Outcome[Any]) -> None:
        """The outcome's undo; a KIP-848 or share group's brings none: its groups are replayed
        from the log, which holds the whole of them (coordinator/consumer/replayed.py)."""
        if outcome.undo is not None:
            outcome.undo()
        elif outcome.records:
            self._reload({record.key.group for record in outcome.records})

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

    def _reply(self, replies: tuple[tuple[Waiter, object], ...]) -> None:
        for waiter, answer in replies:
            waiting = self._waiting.pop(waiter, None)
            if waiting is not None:
                waiting[0](answer)

    def _refuse_replies(self, outcome: Outcome[Any], code: ErrorCode) -> None:
        self._reply(tuple((waiter, refusal(answer, code)) for waiter, answer in outcome.replies))


def refusal(answer: object, code: ErrorCode) -> object:
    """The error answer, in the reply's own type, for a request waiting on an outcome that
    was not carried out."""
    if isinstance(answer, JoinResult):
        return JoinResult(code, answer.member_id)
    if isinstance(answer, SyncResult):
        return SyncResult(code)
    raise TypeError(f"no refusal for a {type(answer).__name__}")
