"""What the consumer-group coordinator takes and returns, in domain terms (no wire formats)."""

from __future__ import annotations

import uuid
from collections.abc import Hashable, Iterable, Mapping
from typing import NamedTuple, Protocol, TypeVar

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.protocol.offsets_records import OffsetsRecord
from kafka_shim.shim.coordinator.outcome import Outcome
from kafka_shim.shim.coordinator.types import GroupSnapshot

T = TypeVar("T")

# topic id -> partitions: every assignment (current, target, owned) takes this form.
Assignment = Mapping[uuid.UUID, frozenset[int]]
NO_PARTITIONS: Assignment = {}


class TopicInfo(NamedTuple):
    topic_id: uuid.UUID
    name: str
    partitions: int


class Topics(Protocol):
    """The broker's topics as the coordinator sees them at the moment of a call."""

    def by_name(self, name: str) -> TopicInfo | None: ...

    def by_id(self, topic_id: uuid.UUID) -> TopicInfo | None: ...

    def names(self) -> Iterable[str]: ...


class TopicImage:
    """A fixed set of topics (tests, and anything that has the topics at hand)."""

    def __init__(self, topics: Iterable[TopicInfo] = ()) -> None:
        self._by_name = {t.name: t for t in topics}
        self._by_id = {t.topic_id: t for t in self._by_name.values()}

    def by_name(self, name: str) -> TopicInfo | None:
        return self._by_name.get(name)

    def by_id(self, topic_id: uuid.UUID) -> TopicInfo | None:
        return self._by_id.get(topic_id)

    def names(self) -> Iterable[str]:
        return self._by_name.keys()


class HeartbeatRequest(NamedTuple):
    """ConsumerGroupHeartbeat; None stands for Kafka's "unchanged since the last heartbeat"."""

    group_id: str
    member_id: str
    member_epoch: int
    instance_id: str | None = None
    rack_id: str | None = None
    rebalance_timeout_ms: int = -1
    subscribed_topic_names: tuple[str, ...] | None = None
    subscribed_topic_regex: str | None = None
    server_assignor: str | None = None
    owned: Assignment | None = None
    client_id: str = ""
    client_host: str = ""
    api_version: int = 1


class HeartbeatResponse(NamedTuple):
    error: ErrorCode
    message: str | None = None
    member_id: str | None = None
    member_epoch: int = 0
    heartbeat_interval_ms: int = 0
    assignment: Assignment | None = None  # None: unchanged (not sent)


# A timer to set (at a time, ms) or cancel (None), by key:
#   ("session", group, member)     the member's heartbeat deadline
#   ("revocation", group, member)  the member must acknowledge a revocation by then
TimerKey = tuple[str, str, str]


class Output:
    """What a call has produced so far; `result` makes it the call's whole output, as every
    coordinator answers (coordinator/outcome.py): the answer, the records to append to
    `__consumer_offsets` before it goes out, the timers to set or cancel, and the group handed
    back to the classic coordinator, if any (`downgraded`)."""

    def __init__(self) -> None:
        self.records: list[OffsetsRecord] = []
        self.timers: list[tuple[Hashable, int | None]] = []
        self.downgraded: GroupSnapshot | None = None

    def result(self, response: T) -> Outcome[T]:
        return Outcome(response, tuple(self.records), tuple(self.timers), downgraded=self.downgraded)


class MemberDescription(NamedTuple):
    member_id: str
    instance_id: str | None
    rack_id: str | None
    member_epoch: int
    client_id: str
    client_host: str
    subscribed_topic_names: tuple[str, ...]
    subscribed_topic_regex: str | None
    assignment: Assignment
    target_assignment: Assignment
    uses_classic_protocol: bool = False


class GroupDescription(NamedTuple):
    error: ErrorCode
    message: str | None
    group_id: str
    state: str = ""
    group_epoch: int = 0
    assignment_epoch: int = 0
    assignor: str = ""
    members: tuple[MemberDescription, ...] = ()


def union(a: Assignment, b: Assignment) -> dict[uuid.UUID, frozenset[int]]:
    merged = dict(a)
    for topic_id, parts in b.items():
        merged[topic_id] = merged.get(topic_id, frozenset()) | parts
    return merged


def normalized(assignment: Assignment) -> dict[uuid.UUID, frozenset[int]]:
    """Without empty topics: two assignments are equal when they assign the same partitions."""
    return {topic_id: parts for topic_id, parts in assignment.items() if parts}


def is_subset(owned: Assignment | None, assigned: Assignment) -> bool:
    if owned is None:
        return True
    return all(parts <= assigned.get(topic_id, frozenset()) for topic_id, parts in owned.items())


def mapping_of(pairs: Mapping[uuid.UUID, Iterable[int]]) -> dict[uuid.UUID, frozenset[int]]:
    return normalized({topic_id: frozenset(parts) for topic_id, parts in pairs.items()})
