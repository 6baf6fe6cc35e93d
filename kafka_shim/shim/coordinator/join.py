"""A classic group's JoinGroup (Kafka's GroupMetadataManager.classicGroupJoin): a new member
(asked first for a known member id when it can give one back), a known member rejoining in
each state, a static member restarting under a new id (KIP-345), and the group size limit.
The rebalance it starts or completes is rebalance.py's.
"""

from __future__ import annotations

from collections.abc import Callable

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.shim.coordinator import group_timers, offsets, records
from kafka_shim.shim.coordinator.group import Group
from kafka_shim.shim.coordinator.member import Member
from kafka_shim.shim.coordinator.outcome import Effects, Waiter
from kafka_shim.shim.coordinator.rebalance import Rebalance, answer_join, answer_sync, join_result
from kafka_shim.shim.coordinator.registry import GroupRegistry
from kafka_shim.shim.coordinator.state import Event, GroupState
from kafka_shim.shim.coordinator.types import (
    UNKNOWN_MEMBER_ID,
    GroupTimer,
    JoinRequest,
    JoinResult,
    SyncResult,
)


class ClassicJoin:
    def __init__(
        self, registry: GroupRegistry, rebalance: Rebalance, new_member_id: Callable[[str], str]
    ) -> None:
        """`new_member_id(prefix)`: a fresh member id (the prefix is the client or instance id)."""
        self._registry = registry
        self._rebalance = rebalance
        self._new_member_id = new_member_id

    def join(self, request: JoinRequest, now: int, waiter: Waiter, out: Effects) -> None:
        if not request.group_id:
            return out.reply(waiter, JoinResult(ErrorCode.INVALID_GROUP_ID, request.member_id))
        if not self._registry.config.allows_session_timeout(request.session_timeout_ms):
            return out.reply(waiter, JoinResult(ErrorCode.INVALID_SESSION_TIMEOUT, request.member_id))
        is_unknown = request.member_id == UNKNOWN_MEMBER_ID
        group = self._registry.get(request.group_id)
        if group is None:
            if not is_unknown:  # a member id for a group that does not exist
                return out.reply(waiter, JoinResult(ErrorCode.UNKNOWN_MEMBER_ID, request.member_id))
            group = self._registry.create(request.group_id, now, out)

        if not self._accepts_joining_member(group, request.member_id):
            if group.remove(request.member_id) is not None:
                group_timers.cancel_member(group, request.member_id, out)
            out.reply(waiter, JoinResult(ErrorCode.GROUP_MAX_SIZE_REACHED, UNKNOWN_MEMBER_ID))
        elif is_unknown:
            self._join_new_member(group, request, now, waiter, out)
        else:
            self._join_current_member(group, request, now, waiter, out)
        self._rebalance.try_complete_join(group, now, out)
        return None

    def _accepts_joining_member(self, group: Group, member_id: str) -> bool:
        limit = self._registry.config.max_group_size
        member = group.members.get(member_id)
        if group.is_(GroupState.PREPARING_REBALANCE):
            # Counting members that rejoined (not all members) lets a shrunk limit
            # push out the last ones to rejoin.
            return (
                member is not None and member.awaiting_join is not None
            ) or group.num_awaiting_join < limit
        if group.is_(GroupState.COMPLETING_REBALANCE, GroupState.STABLE):
            return member is not None or len(group.members) < limit
        return True

    def _join_new_member(
        self, group: Group, request: JoinRequest, now: int, waiter: Waiter, out: Effects
    ) -> None:
        names = {p.name for p in request.protocols}
        if not group.supports_protocols(request.protocol_type, names):
            return out.reply(waiter, JoinResult(ErrorCode.INCONSISTENT_GROUP_PROTOCOL, UNKNOWN_MEMBER_ID))
        instance_id = request.group_instance_id
        new_id = self._new_member_id(instance_id if instance_id is not None else request.client_id)
        if instance_id is not None:
            old_id = group.static_members.get(instance_id)
            if old_id is not None:
                return self._replace_static_member(group, request, old_id, new_id, now, waiter, out)
        elif request.require_known_member_id:
            group.pending_members.add(new_id)
            out.schedule(GroupTimer("pending", group.group_id, new_id), now + request.session_timeout_ms)
            return out.reply(waiter, JoinResult(ErrorCode.MEMBER_ID_REQUIRED, new_id))
        self._add_member_and_rebalance(group, request, new_id, now, waiter, out)
        return None

    def _join_current_member(
        self, group: Group, request: JoinRequest, now: int, waiter: Waiter, out: Effects
    ) -> None:
        member_id = request.member_id
        names = {p.name for p in request.protocols}
        if not group.supports_protocols(request.protocol_type, names):
            return out.reply(waiter, JoinResult(ErrorCode.INCONSISTENT_GROUP_PROTOCOL, member_id))
        if member_id in group.pending_members:
            if request.group_instance_id is not None:
                # Pending ids are handed only to dynamic members; Kafka treats this as impossible.
                return out.reply(waiter, JoinResult(ErrorCode.UNKNOWN_MEMBER_ID, member_id))
            return self._add_member_and_rebalance(group, request, member_id, now, waiter, out)
        error = offsets.validate_member(group, member_id, request.group_instance_id)
        if error is not None:
            return out.reply(waiter, JoinResult(error, member_id))

        member = group.members[member_id]
        if group.is_(GroupState.PREPARING_REBALANCE):
            self._update_member_and_rebalance(group, member, request, now, waiter, out)
        elif group.is_(GroupState.COMPLETING_REBALANCE):
            if member.matches(request.protocols):
                # Its JoinGroup response was lost: answer again, no new rebalance.
                out.reply(waiter, join_result(group, member, with_members=group.is_leader(member_id)))
            else:
                self._update_member_and_rebalance(group, member, request, now, waiter, out)
        elif group.is_(GroupState.STABLE):
            if group.is_leader(member_id) or not member.matches(request.protocols):
                # A leader's rejoin forces a rebalance: it may have seen metadata change.
                self._update_member_and_rebalance(group, member, request, now, waiter, out)
            else:
                out.reply(waiter, join_result(group, member, with_members=False))
        else:
            out.reply(waiter, JoinResult(ErrorCode.UNKNOWN_MEMBER_ID, member_id))
        return None

    def _add_member_and_rebalance(
        self, group: Group, request: JoinRequest, member_id: str, now: int, waiter: Waiter, out: Effects
    ) -> None:
        member = Member(
            member_id=member_id,
            group_instance_id=request.group_instance_id,
            client_id=request.client_id,
            client_host=request.client_host,
            rebalance_timeout_ms=request.rebalance_timeout_ms,
            session_timeout_ms=request.session_timeout_ms,
            protocol_type=request.protocol_type,
            protocols=request.protocols,
            is_new=True,
        )
        if group.is_(GroupState.PREPARING_REBALANCE) and group.generation_id == 0:
            group.new_member_added = True  # lets the initial delay stretch
        group.add(member, waiter)
        out.cancel(GroupTimer("pending", group.group_id, member_id))
        group_timers.schedule_session(group, member, now, out, group_timers.NEW_MEMBER_JOIN_TIMEOUT_MS)
        self._rebalance.maybe_prepare(group, Event.MEMBERS_CHANGED, now, out)

    def _update_member_and_rebalance(
        self, group: Group, member: Member, request: JoinRequest, now: int, waiter: Waiter, out: Effects
    ) -> None:
        group.update_member(
            member, request.protocols, request.rebalance_timeout_ms, request.session_timeout_ms, waiter
        )
        self._rebalance.maybe_prepare(group, Event.MEMBERS_CHANGED, now, out)

    def _replace_static_member(
        self,
        group: Group,
        request: JoinRequest,
        old_id: str,
        new_id: str,
        now: int,
        waiter: Waiter,
        out: Effects,
    ) -> None:
        """KIP-345: a static member restarted with an unknown member id takes over its old entry;
        requests still waiting under the old id are fenced."""
        old_leader = group.leader_id or ""
        assert request.group_instance_id is not None
        old = group.members[old_id]
        answer_join(group, old, JoinResult(ErrorCode.FENCED_INSTANCE_ID, old_id), out)
        answer_sync(group, old, SyncResult(ErrorCode.FENCED_INSTANCE_ID), out)
        member = group.replace_static_member(request.group_instance_id, old_id, new_id)
        out.cancel(GroupTimer("session", group.group_id, old_id))
        group_timers.schedule_session(group, member, now, out)
        group.update_member(
            member, request.protocols, request.rebalance_timeout_ms, request.session_timeout_ms, waiter
        )
        if group.is_(GroupState.STABLE):
            if group.select_protocol() != group.protocol_name:
                self._rebalance.maybe_prepare(group, Event.MEMBERS_CHANGED, now, out)
                return
            # The group keeps its generation under the new member id: Kafka persists that.
            out.records.append(records.group_record(group))
            if request.supports_skip_assignment:
                # v9+: the leader learns it leads but skips the assignor; the group stays Stable.
                is_leader = group.is_leader(new_id)
                result = join_result(group, member, with_members=is_leader)
                answer_join(group, member, result._replace(skip_assignment=is_leader), out)
            else:
                # Older clients get the old leader id, so a restarted leader does not
                # compute an assignment a Stable group would not hand out.
                result = join_result(group, member, with_members=False, leader=old_leader)
                answer_join(group, member, result, out)
        elif group.is_(GroupState.COMPLETING_REBALANCE):
            # The leader may already be assigning to the old member id.
            self._rebalance.prepare(group, Event.MEMBERS_CHANGED, now, out)
