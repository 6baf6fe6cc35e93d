"""The classic side of KIP-848's online migration (in Kafka's GroupMetadataManager): a classic
group's members handed over to a consumer group when one of them joins with the new protocol
(`snapshot`, then `release`), and a consumer group whose members all use the classic protocol
taken back as a classic group (`adopt`, Kafka's ClassicGroup.fromConsumerGroup). The consumer
group's side is consumer/classic.py and consumer/migration.py.
"""

from __future__ import annotations

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.shim.coordinator import group_timers, records
from kafka_shim.shim.coordinator.member import Member
from kafka_shim.shim.coordinator.outcome import Effects
from kafka_shim.shim.coordinator.rebalance import Rebalance, answer_join, answer_sync
from kafka_shim.shim.coordinator.registry import GroupRegistry
from kafka_shim.shim.coordinator.state import Event, GroupState
from kafka_shim.shim.coordinator.types import GroupSnapshot, JoinResult, MemberSnapshot, SyncResult


class ClassicHandover:
    def __init__(self, registry: GroupRegistry, rebalance: Rebalance) -> None:
        self._registry = registry
        self._rebalance = rebalance

    def snapshot(self, group_id: str) -> GroupSnapshot | None:
        """A group's members as they are (None if it has none), for a consumer group to take."""
        group = self._registry.get(group_id)
        if group is None or not group.members:
            return None
        return GroupSnapshot(
            group_id,
            group.generation_id,
            group.protocol_type or "",
            group.protocol_name,
            tuple(
                MemberSnapshot(
                    m.member_id,
                    m.group_instance_id,
                    m.client_id,
                    m.client_host,
                    m.rebalance_timeout_ms,
                    m.session_timeout_ms,
                    m.protocols,
                    m.assignment,
                )
                for m in group.members.values()
            ),
        )

    def release(self, group_id: str, now: int, out: Effects) -> None:
        """Hand a group's members over to a consumer group: waiting joins and syncs are told
        REBALANCE_IN_PROGRESS, the members leave without a rebalance, and the group stays an
        Empty entry that keeps its offsets (its metadata record is tombstoned, as Kafka
        deletes the classic group)."""
        group = self._registry.groups[group_id]
        group_timers.cancel_group(group, out)
        for member_id in [*group.members, *group.pending_members]:
            member = group.members.get(member_id)
            if member is not None:
                answer_join(group, member, JoinResult(ErrorCode.REBALANCE_IN_PROGRESS, member_id), out)
                answer_sync(group, member, SyncResult(ErrorCode.REBALANCE_IN_PROGRESS), out)
            group.remove(member_id)
        group.pending_join = None
        group.restore_empty(group.generation_id, group.protocol_type, now)
        out.records.append(records.group_tombstone(group_id))

    def adopt(self, snapshot: GroupSnapshot, now: int, out: Effects) -> None:
        """A consumer group whose members all use the classic protocol becomes classic again
        (Kafka's ClassicGroup.fromConsumerGroup): Stable at the consumer group's epoch with
        the members' assignments, then a rebalance, so the members rejoin as classic ones."""
        group = self._registry.get(snapshot.group_id) or self._registry.create(snapshot.group_id, now, out)
        assert not group.members, f"group {snapshot.group_id} already has classic members"
        group.protocol_type = snapshot.protocol_type
        for taken in snapshot.members:
            member = Member(
                member_id=taken.member_id,
                group_instance_id=taken.group_instance_id,
                client_id=taken.client_id,
                client_host=taken.client_host,
                rebalance_timeout_ms=taken.rebalance_timeout_ms,
                session_timeout_ms=taken.session_timeout_ms,
                protocol_type=snapshot.protocol_type,
                protocols=taken.protocols,
                assignment=taken.assignment,
            )
            group.add(member, None)
            group_timers.schedule_session(group, member, now, out)
        group.generation_id = snapshot.generation_id
        group.protocol_name = group.select_protocol()
        group.subscribed_topics = None  # unknown until the rebalance ends: every topic counts
        group.state, group.state_since_ms = GroupState.STABLE, now  # as Kafka builds it, not a transition
        out.records.append(records.group_record(group))
        # The members changed under it: every one must rejoin as a classic member.
        self._rebalance.prepare(group, Event.MEMBERS_CHANGED, now, out)
