"""The classic group coordinator: a pure state machine driven with `now` (ms)."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from kafka_shim.shim.coordinator.config import (
        CoordinatorConfig,
    )
    from kafka_shim.shim.coordinator.coordinator import (
        GroupCoordinator,
    )
    from kafka_shim.shim.coordinator.state import (
        GroupState,
    )
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

# Each name is imported from its module on first use, not with the package: importing one
# module of the package (say coordinator.types or coordinator.share.config) then costs that
# module only, and the Kafka listener answers before the coordinators load
# (shim.coordinator_loading).
_HOMES = {
    "CoordinatorConfig": "kafka_shim.shim.coordinator.config",
    "GroupCoordinator": "kafka_shim.shim.coordinator.coordinator",
    "GroupState": "kafka_shim.shim.coordinator.state",
    "CommitRequest": "kafka_shim.shim.coordinator.types",
    "FetchedOffset": "kafka_shim.shim.coordinator.types",
    "GroupDescription": "kafka_shim.shim.coordinator.types",
    "GroupListing": "kafka_shim.shim.coordinator.types",
    "HeartbeatRequest": "kafka_shim.shim.coordinator.types",
    "JoinedMember": "kafka_shim.shim.coordinator.types",
    "JoinRequest": "kafka_shim.shim.coordinator.types",
    "JoinResult": "kafka_shim.shim.coordinator.types",
    "LeaveResult": "kafka_shim.shim.coordinator.types",
    "MemberIdentity": "kafka_shim.shim.coordinator.types",
    "OffsetCommit": "kafka_shim.shim.coordinator.types",
    "Protocol": "kafka_shim.shim.coordinator.types",
    "SyncRequest": "kafka_shim.shim.coordinator.types",
    "SyncResult": "kafka_shim.shim.coordinator.types",
    "TopicPartition": "kafka_shim.shim.coordinator.types",
    "TxnCommitRequest": "kafka_shim.shim.coordinator.types",
}


def __getattr__(name: str) -> object:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(home), name)


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
