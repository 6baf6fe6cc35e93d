"""What the coordinator takes and returns, in domain terms (no wire formats).

Value types are NamedTuples rather than frozen dataclasses: on Python 3.11 a
dataclass costs about 1 ms of start-up to create, a NamedTuple a tenth of that.

Handlers translate requests into these and results into responses.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import NamedTuple, TypeVar

from kafka_shim.protocol.errors import ErrorCode

T = TypeVar("T")

NO_GENERATION = -1
UNKNOWN_MEMBER_ID = ""
NO_ASSIGNMENTS: Mapping[str, bytes] = MappingProxyType({})


class TopicPartition(NamedTuple):
    topic: str
    partition: int


class Protocol(NamedTuple):
    """One assignment protocol a member supports, with its metadata (e.g. its subscription)."""

    name: str
    metadata: bytes


class JoinRequest(NamedTuple):
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


class JoinedMember(NamedTuple):
    member_id: str
    group_instance_id: str | None
    metadata: bytes


class JoinResult(NamedTuple):
    error: ErrorCode
    member_id: str
    generation_id: int = NO_GENERATION
    protocol_type: str | None = None
    protocol_name: str | None = None
    leader: str = ""
    members: tuple[JoinedMember, ...] = ()  # only the leader receives them
    skip_assignment: bool = False


class SyncRequest(NamedTuple):
    group_id: str
    generation_id: int
    member_id: str
    group_instance_id: str | None = None
    # SyncGroup v5+ state what they believe the group's protocol to be; None: not checked.
    protocol_type: str | None = None
    protocol_name: str | None = None
    assignments: Mapping[str, bytes] = NO_ASSIGNMENTS


class SyncResult(NamedTuple):
    error: ErrorCode
    protocol_type: str | None = None
    protocol_name: str | None = None
    assignment: bytes = b""


@dataclass(frozen=True, slots=True)
class GroupTimer:
    """A classic-group deadline (a class of its own, so the broker tells it from the KIP-848
    coordinator's keys). Kafka's purgatories become these kinds:
      join       the delayed join (rebalance timeout, or initial delay)
      sync       members must SyncGroup within the rebalance timeout
      session    a member's heartbeat expiry
      pending    a member id handed out by MEMBER_ID_REQUIRED, unused
      retention  the periodic offsets retention check (no group)
    """

    kind: str
    group_id: str = ""
    member_id: str = ""


class HeartbeatRequest(NamedTuple):
    group_id: str
    generation_id: int
    member_id: str
    group_instance_id: str | None = None


class MemberIdentity(NamedTuple):
    """A member leaving: by member id, or (admin removal) by instance id with an empty member id."""

    member_id: str
    group_instance_id: str | None = None
    reason: str | None = None


class LeaveResult(NamedTuple):
    error: ErrorCode
    members: tuple[tuple[MemberIdentity, ErrorCode], ...] = ()


class OffsetCommit(NamedTuple):
    offset: int
    leader_epoch: int = -1
    metadata: str | None = ""
    # OffsetCommit v2-4 may ask for a retention of their own; later versions leave it to the broker.
    expire_timestamp: int | None = None


class CommitRequest(NamedTuple):
    group_id: str
    offsets: Mapping[TopicPartition, OffsetCommit]
    generation_id: int = NO_GENERATION
    member_id: str = UNKNOWN_MEMBER_ID
    group_instance_id: str | None = None


class TxnCommitRequest(NamedTuple):
    """TxnOffsetCommit: offsets committed inside the producer's transaction (v3+ name the
    member, so a zombie of an older generation is fenced; before v3 nothing is checked)."""

    group_id: str
    producer_id: int
    producer_epoch: int
    offsets: Mapping[TopicPartition, OffsetCommit]
    generation_id: int = NO_GENERATION
    member_id: str = UNKNOWN_MEMBER_ID
    group_instance_id: str | None = None


class FetchedOffset(NamedTuple):
    offset: int = -1  # -1: nothing committed
    leader_epoch: int = -1
    metadata: str = ""
    error: ErrorCode = ErrorCode.NONE


class MemberDescription(NamedTuple):
    member_id: str
    group_instance_id: str | None
    client_id: str
    client_host: str
    metadata: bytes  # only while Stable, as Kafka reports it
    assignment: bytes


class GroupDescription(NamedTuple):
    error: ErrorCode
    group_id: str
    state: str
    protocol_type: str
    protocol_name: str
    members: tuple[MemberDescription, ...]


class GroupListing(NamedTuple):
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


class MemberSnapshot(NamedTuple):
    """A classic member as it moves between a classic group and a consumer group (KIP-848's
    online migration): who it is, its timeouts, its protocols and its assignment."""

    member_id: str
    group_instance_id: str | None
    client_id: str
    client_host: str
    rebalance_timeout_ms: int
    session_timeout_ms: int
    protocols: tuple[Protocol, ...]
    assignment: bytes


class GroupSnapshot(NamedTuple):
    group_id: str
    generation_id: int
    protocol_type: str
    protocol_name: str | None
    members: tuple[MemberSnapshot, ...]
