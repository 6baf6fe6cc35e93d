"""What the coordinator takes and returns, in domain terms (no wire formats).

Handlers translate requests into these and results into responses.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import NamedTuple, TypeVar

from protocol.errors import ErrorCode

T = TypeVar("T")

NO_GENERATION = -1
UNKNOWN_MEMBER_ID = ""


class TopicPartition(NamedTuple):
    topic: str
    partition: int


@dataclass(frozen=True)
class Protocol:
    """One assignment protocol a member supports, with its metadata (e.g. its subscription)."""

    name: str
    metadata: bytes


@dataclass(frozen=True)
class JoinRequest:
    group_id: str
    member_id: str
    session_timeout_ms: int
    rebalance_timeout_ms: int
    protocol_type: str
    protocols: tuple[Protocol, ...]
    group_instance_id: str | None = None
    client_id: str = ""
    client_host: str = ""
    # JoinGroup v4+: an unknown dynamic member is first handed an id (MEMBER_ID_REQUIRED).
    require_known_member_id: bool = True
    # JoinGroup v9+: a static leader replaced in a Stable group may skip the assignment.
    supports_skip_assignment: bool = False
    reason: str | None = None


@dataclass(frozen=True)
class JoinedMember:
    member_id: str
    group_instance_id: str | None
    metadata: bytes


@dataclass(frozen=True)
class JoinResult:
    error: ErrorCode
    member_id: str
    generation_id: int = NO_GENERATION
    protocol_type: str | None = None
    protocol_name: str | None = None
    leader: str = ""
    members: tuple[JoinedMember, ...] = ()  # only the leader receives them
    skip_assignment: bool = False


@dataclass(frozen=True)
class SyncRequest:
    group_id: str
    generation_id: int
    member_id: str
    group_instance_id: str | None = None
    # SyncGroup v5+ state what they believe the group's protocol to be; None: not checked.
    protocol_type: str | None = None
    protocol_name: str | None = None
    assignments: Mapping[str, bytes] = field(default_factory=dict)


@dataclass(frozen=True)
class SyncResult:
    error: ErrorCode
    protocol_type: str | None = None
    protocol_name: str | None = None
    assignment: bytes = b""


JoinCallback = Callable[[JoinResult], None]
SyncCallback = Callable[[SyncResult], None]


@dataclass(frozen=True)
class HeartbeatRequest:
    group_id: str
    generation_id: int
    member_id: str
    group_instance_id: str | None = None


@dataclass(frozen=True)
class MemberIdentity:
    """A member leaving: by member id, or (admin removal) by instance id with an empty member id."""

    member_id: str
    group_instance_id: str | None = None
    reason: str | None = None


@dataclass(frozen=True)
class LeaveResult:
    error: ErrorCode
    members: tuple[tuple[MemberIdentity, ErrorCode], ...] = ()


@dataclass(frozen=True)
class OffsetCommit:
    offset: int
    leader_epoch: int = -1
    metadata: str | None = ""
    # OffsetCommit v2-4 may ask for a retention of their own; later versions leave it to the broker.
    expire_timestamp_ms: int | None = None


@dataclass(frozen=True)
class CommitRequest:
    group_id: str
    offsets: Mapping[TopicPartition, OffsetCommit]
    generation_id: int = NO_GENERATION
    member_id: str = UNKNOWN_MEMBER_ID
    group_instance_id: str | None = None


@dataclass(frozen=True)
class CommittedOffset:
    offset: int
    leader_epoch: int
    metadata: str
    commit_timestamp_ms: int
    expire_timestamp_ms: int | None = None


@dataclass(frozen=True)
class FetchedOffset:
    offset: int = -1  # -1: nothing committed
    leader_epoch: int = -1
    metadata: str = ""
    error: ErrorCode = ErrorCode.NONE


@dataclass(frozen=True)
class MemberDescription:
    member_id: str
    group_instance_id: str | None
    client_id: str
    client_host: str
    metadata: bytes  # only while Stable, as Kafka reports it
    assignment: bytes


@dataclass(frozen=True)
class GroupDescription:
    error: ErrorCode
    group_id: str
    state: str
    protocol_type: str
    protocol_name: str
    members: tuple[MemberDescription, ...]


@dataclass(frozen=True)
class GroupListing:
    group_id: str
    protocol_type: str
    state: str
    group_type: str = "classic"


def by_topic(per_partition: Mapping[TopicPartition, T]) -> dict[str, list[tuple[int, T]]]:
    """Per-partition results grouped the way Kafka responses nest them: topic, then partitions."""
    topics: dict[str, list[tuple[int, T]]] = {}
    for tp, value in per_partition.items():
        topics.setdefault(tp.topic, []).append((tp.partition, value))
    return topics
