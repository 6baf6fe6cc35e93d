"""A consumer-group member: what it subscribed to, and where it stands in reconciliation."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from enum import IntEnum

from kafka_shim.shim.coordinator.consumer.types import NO_PARTITIONS, Assignment
from kafka_shim.shim.coordinator.types import Protocol


class MemberState(IntEnum):
    """Kafka's MemberState, with its byte values (they are written to the offsets log)."""

    STABLE = 0  # owns exactly its assignment at its epoch
    UNREVOKED_PARTITIONS = 1  # must give up `pending_revocation` before moving on
    UNRELEASED_PARTITIONS = 2  # at the target epoch, waiting for others to release partitions
    UNKNOWN = 127


@dataclass(frozen=True)
class ClassicMetadata:
    """A member that speaks the classic protocol (JoinGroup, SyncGroup, Heartbeat) inside a
    consumer group: its session timeout and the protocols it joined with (Kafka's
    ClassicMemberMetadata)."""

    session_timeout_ms: int
    protocols: tuple[Protocol, ...]


@dataclass(frozen=True)
class ConsumerMember:
    member_id: str
    instance_id: str | None = None
    rack_id: str | None = None
    client_id: str = ""
    client_host: str = ""
    subscribed_topic_names: tuple[str, ...] = ()
    subscribed_topic_regex: str | None = None
    rebalance_timeout_ms: int = -1
    server_assignor: str | None = None
    member_epoch: int = 0
    previous_member_epoch: int = 0
    state: MemberState = MemberState.STABLE
    assigned: Assignment = field(default_factory=lambda: NO_PARTITIONS)
    pending_revocation: Assignment = field(default_factory=lambda: NO_PARTITIONS)
    classic: ClassicMetadata | None = None  # None: it uses the consumer protocol

    def subscription(self) -> tuple[object, ...]:
        """What the member-metadata record holds: a change of it is written down."""
        return (
            self.instance_id,
            self.rack_id,
            self.client_id,
            self.client_host,
            self.subscribed_topic_names,
            self.subscribed_topic_regex,
            self.rebalance_timeout_ms,
            self.server_assignor,
            self.classic,
        )

    def reconciliation(self) -> tuple[object, ...]:
        """What the current-assignment record holds."""
        return (
            self.member_epoch,
            self.previous_member_epoch,
            self.state,
            self.assigned,
            self.pending_revocation,
        )

    def is_reconciled_to(self, epoch: int) -> bool:
        return self.state == MemberState.STABLE and self.member_epoch == epoch

    def with_epoch(self, epoch: int, **changes: object) -> ConsumerMember:
        """Kafka's updateMemberEpoch: the epoch moves and the old one is kept as previous."""
        return replace(self, member_epoch=epoch, previous_member_epoch=self.member_epoch, **changes)  # type: ignore[arg-type]
