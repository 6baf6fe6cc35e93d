"""Drives the pure coordinator with a fake clock: no sockets, no sleeps.

The harness carries out every outcome as the broker does: records go to `log`, deadlines
are kept and fired by `advance`, replies reach the `Reply` of the request that waits for
them, so a test can assert both "not answered yet" and "answered with X".
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.protocol.offsets_records import OffsetsRecord
from kafka_shim.shim.coordinator.config import CoordinatorConfig
from kafka_shim.shim.coordinator.coordinator import GroupCoordinator
from kafka_shim.shim.coordinator.group import Group
from kafka_shim.shim.coordinator.outcome import Outcome
from kafka_shim.shim.coordinator.state import GroupState
from kafka_shim.shim.coordinator.timers import Deadlines
from kafka_shim.shim.coordinator.types import (
    GroupTimer,
    HeartbeatRequest,
    JoinRequest,
    JoinResult,
    Protocol,
    SyncRequest,
    SyncResult,
)
from tests.helpers import FakeClock, subscription

T = TypeVar("T")

GROUP = "group-a"
SESSION_MS = 10_000
REBALANCE_MS = 30_000


RANGE = (Protocol("range", subscription("t")),)


@dataclass
class Reply(Generic[T]):
    values: list[T] = field(default_factory=list)

    def __call__(self, value: T) -> None:
        self.values.append(value)

    @property
    def answered(self) -> bool:
        return bool(self.values)

    @property
    def value(self) -> T:
        assert len(self.values) == 1, f"expected exactly one answer, got {self.values}"
        return self.values[0]


class Harness:
    def __init__(self, **config: Any) -> None:  # CoordinatorConfig fields
        self.clock = FakeClock(1_000_000)
        self._ids = 0
        # KIP-848 groups beside the classic ones: group id -> the topics its members subscribe to.
        self.consumer_groups: dict[str, frozenset[str]] = {}
        self.coordinator = GroupCoordinator(
            CoordinatorConfig(**config),
            new_member_id=self._new_id,
            consumer_group_topics=self.consumer_groups.get,
        )
        self.deadlines = Deadlines()
        self.log: list[OffsetsRecord] = []  # every record appended, oldest first
        self._taken = 0
        self._waiting: dict[int, Reply[Any]] = {}
        self._waiter_ids = itertools.count(1)

    def _new_id(self, prefix: str) -> str:
        self._ids += 1
        return f"{prefix}-{self._ids}"

    @property
    def now(self) -> int:
        return self.clock.now

    @now.setter
    def now(self, value: int) -> None:
        self.clock.now = value

    # --- carrying out outcomes, as the broker does ---
    def apply(self, outcome: Outcome[T]) -> T:
        self.log.extend(outcome.records)
        for key, at in outcome.timers:
            if at is None:
                self.deadlines.cancel(key)
            else:
                self.deadlines.schedule(key, at)
        for waiter, answer in outcome.replies:
            assert isinstance(waiter, int)
            self._waiting.pop(waiter)(answer)  # every waiter is answered once
        return outcome.response

    def waiter(self, reply: Reply[Any]) -> int:
        waiter = next(self._waiter_ids)
        self._waiting[waiter] = reply
        return waiter

    def take_records(self) -> list[OffsetsRecord]:
        """The records appended since the last take."""
        taken, self._taken = self.log[self._taken :], len(self.log)
        return taken

    # --- clock ---
    def advance(self, ms: int) -> None:
        """Move the fake clock, firing deadlines as the server's timer task would."""
        target = self.now + ms
        while (deadline := self.deadlines.earliest()) is not None and deadline <= target:
            self.now = max(self.now, deadline)
            key = self.deadlines.pop_due(self.now)
            assert isinstance(key, GroupTimer)
            self.apply(self.coordinator.on_timer(key, self.now))
        self.now = target

    # --- requests ---
    def join(
        self,
        member_id: str = "",
        *,
        client: str = "client",
        protocols: tuple[Protocol, ...] = RANGE,
        protocol_type: str = "consumer",
        instance: str | None = None,
        session_ms: int = SESSION_MS,
        rebalance_ms: int = REBALANCE_MS,
        require_known: bool = True,
        skip_assignment: bool = False,
        group: str = GROUP,
    ) -> Reply[JoinResult]:
        reply: Reply[JoinResult] = Reply()
        request = JoinRequest(
            group_id=group,
            member_id=member_id,
            session_timeout_ms=session_ms,
            rebalance_timeout_ms=rebalance_ms,
            protocol_type=protocol_type,
            protocols=protocols,
            group_instance_id=instance,
            client_id=client,
            client_host="/127.0.0.1",
            require_known_member_id=require_known,
            supports_skip_assignment=skip_assignment,
        )
        self.apply(self.coordinator.join_group(request, self.now, self.waiter(reply)))
        return reply

    def join_new(self, client: str = "client", **kwargs: object) -> tuple[str, Reply[JoinResult]]:
        """A v4+ dynamic member's two-step join: MEMBER_ID_REQUIRED, then join with the id."""
        first = self.join(client=client, **kwargs)  # type: ignore[arg-type]
        assert first.value.error == ErrorCode.MEMBER_ID_REQUIRED
        member_id = first.value.member_id
        return member_id, self.join(member_id, client=client, **kwargs)  # type: ignore[arg-type]

    def sync(
        self,
        member_id: str,
        generation: int,
        assignments: dict[str, bytes] | None = None,
        *,
        instance: str | None = None,
        protocol_type: str | None = None,
        protocol_name: str | None = None,
        group: str = GROUP,
    ) -> Reply[SyncResult]:
        reply: Reply[SyncResult] = Reply()
        request = SyncRequest(
            group, generation, member_id, instance, protocol_type, protocol_name, assignments or {}
        )
        self.apply(self.coordinator.sync_group(request, self.now, self.waiter(reply)))
        return reply

    def heartbeat(
        self, member_id: str, generation: int, *, instance: str | None = None, group: str = GROUP
    ) -> ErrorCode:
        beat = HeartbeatRequest(group, generation, member_id, instance)
        return self.apply(self.coordinator.heartbeat(beat, self.now))

    # --- inspection ---
    def group(self, group_id: str = GROUP) -> Group:
        group = self.coordinator.group(group_id)
        assert group is not None
        return group

    @property
    def state(self) -> GroupState:
        return self.group().state

    def stable_group(self, *clients: str) -> dict[str, str]:
        """Form a Stable generation-1 group of the given clients; client -> member id."""
        replies = {}
        ids = {}
        for client in clients:
            ids[client], replies[client] = self.join_new(client)
        # Each newcomer starts a rebalance that members answered earlier must rejoin.
        for _ in clients:
            group = self.group()
            if group.state == GroupState.COMPLETING_REBALANCE and len(group.members) == len(clients):
                break
            for client in clients:
                member = group.members.get(ids[client])
                if group.state == GroupState.PREPARING_REBALANCE and member and member.awaiting_join is None:
                    replies[client] = self.join(ids[client], client=client)
        results = {c: r.values[-1] for c, r in replies.items()}
        leader = next(c for c, r in results.items() if r.leader == r.member_id)
        generation = results[leader].generation_id
        assignment = {ids[c]: f"assignment-{c}".encode() for c in clients}
        syncs = [self.sync(ids[c], generation) for c in clients if c != leader]
        syncs.append(self.sync(ids[leader], generation, assignment))
        assert all(s.value.error == ErrorCode.NONE for s in syncs)
        assert self.state == GroupState.STABLE
        return ids
