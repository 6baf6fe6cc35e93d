"""The classic group coordinator: a pure state machine driven with `now` (ms)."""

from kafka_shim.shim.coordinator.config import CoordinatorConfig
from kafka_shim.shim.coordinator.coordinator import GroupCoordinator
from kafka_shim.shim.coordinator.state import GroupState
from kafka_shim.shim.coordinator.types import (
    CommitRequest,
    FetchedOffset,
    GroupDescription,
    GroupListing,
    HeartbeatRequest,
    JoinedMember,
    JoinRequest,
    JoinResult,
    LeaveResult,
    MemberIdentity,
    OffsetCommit,
    Protocol,
    SyncRequest,
    SyncResult,
    TopicPartition,
    TxnCommitRequest,
)

__all__ = [
    "CommitRequest",
    "CoordinatorConfig",
    "FetchedOffset",
    "GroupCoordinator",
    "GroupDescription",
    "GroupListing",
    "GroupState",
    "HeartbeatRequest",
    "JoinRequest",
    "JoinResult",
    "JoinedMember",
    "LeaveResult",
    "MemberIdentity",
    "OffsetCommit",
    "Protocol",
    "SyncRequest",
    "SyncResult",
    "TopicPartition",
    "TxnCommitRequest",
]
