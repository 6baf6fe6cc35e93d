"""A classic group's SyncGroup, Heartbeat and LeaveGroup, and its description and listing
(the classic parts of Kafka's GroupMetadataManager besides JoinGroup, which join.py keeps).
What they do to a rebalance in progress is rebalance.py's.
"""

from __future__ import annotations

from collections.abc import Collection

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.shim.coordinator import group_timers, offsets, records
from kafka_shim.shim.coordinator.group import Group
from kafka_shim.shim.coordinator.outcome import Effects, Waiter
from kafka_shim.shim.coordinator.rebalance import Rebalance
from kafka_shim.shim.coordinator.registry import GroupRegistry
from kafka_shim.shim.coordinator.state import Event, GroupState
from kafka_shim.shim.coordinator.types import (
    UNKNOWN_MEMBER_ID,
    GroupDescription,
    GroupListing,
    GroupTimer,
    HeartbeatRequest,
    LeaveResult,
    MemberDescription,
    MemberIdentity,
    SyncRequest,
    SyncResult,
)


class ClassicMembership:
    def __init__(self, registry: GroupRegistry, rebalance: Rebalance) -> None:
        self._registry = registry
        self._rebalance = rebalance

    # --- SyncGroup -----------------------------------------------------------------------

    def sync(self, request: SyncRequest, now: int, waiter: Waiter, out: Effects) -> None:
        if not request.group_id:
            return out.reply(waiter, SyncResult(ErrorCode.INVALID_GROUP_ID))
        group = self._registry.get(request.group_id)
        if group is None:
            return out.reply(waiter, SyncResult(ErrorCode.UNKNOWN_MEMBER_ID))
        error = offsets.validate_member(group, request.member_id, request.group_instance_id)
        if error is None and request.generation_id != group.generation_id:
            error = ErrorCode.ILLEGAL_GENERATION
        if error is None and not _claims_match(request, group):
            error = ErrorCode.INCONSISTENT_GROUP_PROTOCOL
        if error is not None:
            return out.reply(waiter, SyncResult(error))

        member = group.members[request.member_id]
        if group.is_(GroupState.EMPTY):
            out.reply(waiter, SyncResult(ErrorCode.UNKNOWN_MEMBER_ID))
        elif group.is_(GroupState.PREPARING_REBALANCE):
            out.reply(waiter, SyncResult(ErrorCode.REBALANCE_IN_PROGRESS))
        elif group.is_(GroupState.COMPLETING_REBALANCE):
            group.changing(member).awaiting_sync = waiter
            _synced(group, request.member_id, out)
            if group.is_leader(request.member_id):
                for member_id, each in group.members.items():
                    group.changing(each).assignment = request.assignments.get(member_id, b"")
                self._rebalance.propagate_assignment(group, ErrorCode.NONE, now, out)
                group.transition(Event.LEADER_SYNCED, now)
                out.records.append(records.group_record(group))
        else:  # Stable: a retry, or a follower that joined late; it gets what the leader assigned
            _synced(group, request.member_id, out)
            answer = SyncResult(ErrorCode.NONE, group.protocol_type, group.protocol_name, member.assignment)
            out.reply(waiter, answer)
            group_timers.schedule_session(group, member, now, out)
        return None

    # --- Heartbeat -----------------------------------------------------------------------

    def heartbeat(self, request: HeartbeatRequest, now: int, out: Effects) -> ErrorCode:
        if not request.group_id:
            return ErrorCode.INVALID_GROUP_ID
        group = self._registry.get(request.group_id)
        if group is None:
            return ErrorCode.UNKNOWN_MEMBER_ID
        error = offsets.validate_member(group, request.member_id, request.group_instance_id)
        if error is None and request.generation_id != group.generation_id:
            error = ErrorCode.ILLEGAL_GENERATION
        if error is not None:
            return error
        if group.is_(GroupState.EMPTY):
            return ErrorCode.UNKNOWN_MEMBER_ID
        # Any other state keeps the session alive; only a rebalance being prepared is news.
        group_timers.schedule_session(group, group.members[request.member_id], now, out)
        if group.is_(GroupState.PREPARING_REBALANCE):
            return ErrorCode.REBALANCE_IN_PROGRESS
        return ErrorCode.NONE

    # --- LeaveGroup ----------------------------------------------------------------------

    def leave(self, group_id: str, leaving: list[MemberIdentity], now: int, out: Effects) -> LeaveResult:
        if not group_id:
            return LeaveResult(ErrorCode.INVALID_GROUP_ID)
        group = self._registry.get(group_id)
        if group is None:
            return LeaveResult(ErrorCode.NONE, tuple((m, ErrorCode.UNKNOWN_MEMBER_ID) for m in leaving))
        return LeaveResult(ErrorCode.NONE, tuple((m, self._leave_one(group, m, now, out)) for m in leaving))

    def _leave_one(self, group: Group, identity: MemberIdentity, now: int, out: Effects) -> ErrorCode:
        if identity.member_id == UNKNOWN_MEMBER_ID:
            # Administrative removal of a static member by its instance id.
            current = None
            if identity.group_instance_id is not None:
                current = group.static_members.get(identity.group_instance_id)
            if current is None:
                return ErrorCode.UNKNOWN_MEMBER_ID
            self._rebalance.remove_member(group, group.members[current], now, out)
            return ErrorCode.NONE
        if identity.member_id in group.pending_members:
            group.pending_members.discard(identity.member_id)
            out.cancel(GroupTimer("pending", group.group_id, identity.member_id))
            self._rebalance.try_complete_join(group, now, out)
            return ErrorCode.NONE
        error = offsets.validate_member(group, identity.member_id, identity.group_instance_id)
        if error is not None:
            return error
        self._rebalance.remove_member(group, group.members[identity.member_id], now, out)
        return ErrorCode.NONE

    # --- DescribeGroups, ListGroups ------------------------------------------------------

    def describe(self, group_id: str) -> GroupDescription:
        group = self._registry.get(group_id)
        if group is None:
            return GroupDescription(ErrorCode.NONE, group_id, GroupState.DEAD.value, "", "", ())
        stable = group.is_(GroupState.STABLE)
        protocol_name = group.protocol_name if stable and group.protocol_name else ""
        members = tuple(
            MemberDescription(
                m.member_id,
                m.group_instance_id,
                m.client_id,
                m.client_host,
                m.metadata(protocol_name) if stable else b"",
                m.assignment if stable else b"",
            )
            for m in group.members.values()
        )
        return GroupDescription(
            ErrorCode.NONE, group_id, group.state.value, group.protocol_type or "", protocol_name, members
        )

    def listing(self, states: Collection[str], types: Collection[str]) -> list[GroupListing]:
        wanted_states = {s.lower() for s in states}
        if types and "classic" not in {t.lower() for t in types}:
            return []
        return [
            GroupListing(g.group_id, g.protocol_type or "", g.state.value)
            for g in self._registry.groups.values()
            if not wanted_states or g.state.value.lower() in wanted_states
        ]


def _synced(group: Group, member_id: str, out: Effects) -> None:
    group.pending_sync.discard(member_id)
    if not group.pending_sync:
        out.cancel(GroupTimer("sync", group.group_id))


def _claims_match(request: SyncRequest, group: Group) -> bool:
    """SyncGroup v5+ name the protocol they think the group uses; it must be the group's."""
    if request.protocol_type is not None and request.protocol_type != group.protocol_type:
        return False
    return request.protocol_name is None or request.protocol_name == group.protocol_name
