"""Drives the consumer-group coordinator with a fake clock, as the broker does: records are
kept (encoded and decoded through Kafka's formats), timers kept and fired when the clock
passes them. After every call it checks the invariant reconciliation exists for: no
partition is held by two members at once."""

from __future__ import annotations

import uuid
from collections import Counter
from typing import Any

from kafka_shim.protocol.offsets_records import OffsetsRecord, decode_record, encode_record
from kafka_shim.shim.coordinator.consumer import (
    ConsumerGroupConfig,
    HeartbeatRequest,
    HeartbeatResponse,
    TopicImage,
    TopicInfo,
)
from kafka_shim.shim.coordinator.consumer.classic import MigratingCoordinator
from kafka_shim.shim.coordinator.consumer.group import ConsumerGroup
from kafka_shim.shim.coordinator.outcome import Outcome
from kafka_shim.shim.coordinator.timers import Deadlines
from kafka_shim.shim.coordinator.types import GroupSnapshot
from tests.helpers import FakeClock

GROUP = "g"
TOPIC = TopicInfo(uuid.UUID(int=1), "t", 6)
OTHER = TopicInfo(uuid.UUID(int=2), "u", 2)
REBALANCE_MS = 30_000


def parts(*partitions: int, topic: TopicInfo = TOPIC) -> dict[uuid.UUID, frozenset[int]]:
    return {topic.topic_id: frozenset(partitions)} if partitions else {}


class Driver:
    def __init__(self, *topics: TopicInfo, **config: Any) -> None:
        self.clock = FakeClock()
        self.topics = TopicImage(topics or (TOPIC,))
        self.coordinator = MigratingCoordinator(ConsumerGroupConfig(**config), new_member_id=self._next_id)
        self.deadlines = Deadlines()
        self.log: list[OffsetsRecord] = []
        self.downgraded: GroupSnapshot | None = None  # what the classic coordinator would take
        self._ids = 0

    def _next_id(self) -> str:
        self._ids += 1
        return f"generated-{self._ids}"

    def apply(self, result: Outcome[Any]) -> Any:
        # Through the bytes Kafka would write, as the broker's offsets log does.
        self.log += [decode_record(*encode_record(r)) for r in result.records]
        for key, at in result.timers:
            if at is None:
                self.deadlines.cancel(key)
            else:
                self.deadlines.schedule(key, at)
        if result.downgraded is not None:
            self.downgraded = result.downgraded
        self.check_ownership()
        return result.response

    def beat(self, member: str, epoch: int, **fields: Any) -> HeartbeatResponse:
        if epoch == 0:
            fields.setdefault("rebalance_timeout_ms", REBALANCE_MS)
            fields.setdefault("owned", {})
            if "subscribed_topic_regex" not in fields:
                fields.setdefault("subscribed_topic_names", (TOPIC.name,))
        request = HeartbeatRequest(GROUP, member, epoch, **fields)
        response: HeartbeatResponse = self.apply(
            self.coordinator.heartbeat(request, self.topics, self.clock.now)
        )
        return response

    def join(self, member: str, **fields: Any) -> HeartbeatResponse:
        return self.beat(member, 0, **fields)

    def advance(self, ms: int) -> None:
        self.clock.now += ms
        while (key := self.deadlines.pop_due(self.clock.now)) is not None:
            self.apply(self.coordinator.on_timer(key, self.topics, self.clock.now))

    @property
    def group(self) -> ConsumerGroup:
        group = self.coordinator.group(GROUP)
        assert group is not None
        return group

    def epoch_of(self, member: str) -> int:
        return self.group.members[member].member_epoch

    def check_ownership(self) -> None:
        group = self.coordinator.group(GROUP)
        if group is None:
            return
        held = Counter(
            (topic_id, p)
            for m in group.members.values()
            for holding in (m.assigned, m.pending_revocation)
            for topic_id, ps in holding.items()
            for p in ps
        )
        twice = [tp for tp, n in held.items() if n > 1]
        assert not twice, f"held by two members at once: {twice}"

    def settle(self, members: list[str], rounds: int = 6) -> None:
        """Every member heartbeats, reporting what it holds, until nothing changes."""
        for _ in range(rounds):
            for name in members:
                member = self.group.members[name]
                self.beat(name, member.member_epoch, owned=dict(member.assigned))
