"""A classic group's rebalance (the part of Kafka's GroupMetadataManager every classic request
and deadline drives): preparing it, completing the delayed join, handing out the leader's
assignment, and what a member's removal or an expired deadline does to it. The answers to
JoinGroup and SyncGroup requests waiting on it go out as replies (outcome.py).
"""

from __future__ import annotations

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.shim.coordinator import group_timers, records
from kafka_shim.shim.coordinator.config import CoordinatorConfig
from kafka_shim.shim.coordinator.group import Group, PendingJoin
from kafka_shim.shim.coordinator.member import Member
from kafka_shim.shim.coordinator.outcome import Effects
from kafka_shim.shim.coordinator.state import Event, GroupState
from kafka_shim.shim.coordinator.types import UNKNOWN_MEMBER_ID, GroupTimer, JoinResult, SyncResult


def answer_join(group: Group, member: Member, result: JoinResult, out: Effects) -> bool:
    """Answer the member's waiting JoinGroup, if it has one."""
    waiter = member.awaiting_join
    if waiter is None:
        return False
    group.changing(member).awaiting_join = None
    out.reply(waiter, result)
    return True


def answer_sync(group: Group, member: Member, result: SyncResult, out: Effects) -> bool:
    """Answer the member's waiting SyncGroup, if it has one."""
    waiter = member.awaiting_sync
    if waiter is None:
        return False
    group.changing(member).awaiting_sync = None
    out.reply(waiter, result)
    return True


def join_result(group: Group, member: Member, *, with_members: bool, leader: str | None = None) -> JoinResult:
    """A successful JoinGroup answer in the group's current generation (the leader's lists the members)."""
    return JoinResult(
        ErrorCode.NONE,
        member.member_id,
        generation_id=group.generation_id,
        protocol_type=group.protocol_type,
        protocol_name=group.protocol_name,
        leader=(group.leader_id or "") if leader is None else leader,
        members=group.current_member_metadata() if with_members else (),
    )


class Rebalance:
    def __init__(self, config: CoordinatorConfig) -> None:
        self._config = config

    def maybe_prepare(self, group: Group, event: Event, now: int, out: Effects) -> None:
        if group.can_rebalance:
            self.prepare(group, event, now, out)

    def prepare(self, group: Group, event: Event, now: int, out: Effects) -> None:
        if group.is_(GroupState.COMPLETING_REBALANCE):
            self._reset_and_propagate_assignment_error(group, ErrorCode.REBALANCE_IN_PROGRESS, now, out)
        group.pending_sync.clear()
        out.cancel(GroupTimer("sync", group.group_id))
        if group.is_(GroupState.EMPTY):
            delay = self._config.initial_rebalance_delay_ms
            group.pending_join = PendingJoin(
                initial=True, delay_ms=delay, remaining_ms=max(group.rebalance_timeout_ms - delay, 0)
            )
            out.schedule(GroupTimer("join", group.group_id), now + delay)
        else:
            group.pending_join = PendingJoin(initial=False)
            out.schedule(GroupTimer("join", group.group_id), now + group.rebalance_timeout_ms)
        group.transition(event, now)
        self.try_complete_join(group, now, out)

    def try_complete_join(self, group: Group, now: int, out: Effects) -> None:
        """The delayed join completes as soon as every known member has rejoined."""
        pending = group.pending_join
        if (
            group.is_(GroupState.PREPARING_REBALANCE)
            and pending is not None
            and not pending.initial
            and group.has_all_members_joined
        ):
            self._complete_join(group, now, out)

    def on_join_deadline(self, group: Group, now: int, out: Effects) -> None:
        pending = group.pending_join
        if pending is None:
            return
        if pending.initial and group.new_member_added and pending.remaining_ms != 0:
            # Members keep arriving: wait another delay, within the rebalance timeout.
            group.new_member_added = False
            delay = min(self._config.initial_rebalance_delay_ms, pending.remaining_ms)
            group.pending_join = PendingJoin(
                initial=True, delay_ms=delay, remaining_ms=max(pending.remaining_ms - pending.delay_ms, 0)
            )
            out.schedule(GroupTimer("join", group.group_id), now + delay)
            return
        self._complete_join(group, now, out)

    def _complete_join(self, group: Group, now: int, out: Effects) -> None:
        group.pending_join = None
        out.cancel(GroupTimer("join", group.group_id))
        # Dynamic members that did not rejoin in time are dropped; static ones keep their place.
        for member in list(group.members.values()):
            if member.awaiting_join is None and not member.is_static:
                group.remove(member.member_id)
                group_timers.cancel_member(group, member.member_id, out)

        if not group.elect_joined_leader() and group.members:
            # Only static members that did not rejoin remain: wait another rebalance
            # timeout, until their sessions expire.
            group.pending_join = PendingJoin(initial=False)
            out.schedule(GroupTimer("join", group.group_id), now + group.rebalance_timeout_ms)
            return

        group.init_next_generation(now)
        if group.is_(GroupState.EMPTY):
            out.records.append(records.group_record(group))
            return
        for member in group.members.values():
            result = join_result(group, member, with_members=group.is_leader(member.member_id))
            answer_join(group, member, result, out)
            group_timers.schedule_session(group, member, now, out)
            if member.is_new:
                group.changing(member).is_new = False
            group.pending_sync.add(member.member_id)
        out.schedule(GroupTimer("sync", group.group_id), now + group.rebalance_timeout_ms)

    def on_sync_deadline(self, group: Group, now: int, out: Effects) -> None:
        """Members that never sent SyncGroup for this generation are removed, and the group rebalances."""
        if not group.is_(GroupState.COMPLETING_REBALANCE, GroupState.STABLE) or not group.pending_sync:
            return
        for member_id in list(group.pending_sync):
            group.remove(member_id)
            group_timers.cancel_member(group, member_id, out)
        self.prepare(group, Event.MEMBER_REMOVED, now, out)

    def _reset_and_propagate_assignment_error(
        self, group: Group, error: ErrorCode, now: int, out: Effects
    ) -> None:
        for member in group.members.values():
            if member.assignment:
                group.changing(member).assignment = b""
        self.propagate_assignment(group, error, now, out)

    def propagate_assignment(self, group: Group, error: ErrorCode, now: int, out: Effects) -> None:
        ok = error == ErrorCode.NONE
        for member in group.members.values():
            result = SyncResult(
                error,
                group.protocol_type if ok else None,
                group.protocol_name if ok else None,
                member.assignment,
            )
            if answer_sync(group, member, result, out):
                # Its session may have lapsed while it waited for the leader.
                group_timers.schedule_session(group, member, now, out)

    # --- members leaving -----------------------------------------------------------------

    def on_session_expired(self, group: Group, member_id: str, now: int, out: Effects) -> None:
        member = group.members.get(member_id)
        if member is None:
            return
        waiting = member.awaiting_join is not None or member.awaiting_sync is not None
        if member.is_new or not waiting:
            self.remove_member(group, member, now, out)
        # A member waiting on a rebalance is alive; its session restarts when it is answered.

    def on_pending_member_expired(self, group: Group, member_id: str, now: int, out: Effects) -> None:
        if member_id in group.pending_members:
            group.pending_members.discard(member_id)
            self.try_complete_join(group, now, out)

    def remove_member(self, group: Group, member: Member, now: int, out: Effects) -> None:
        """The member leaves (or its session ended); the group rebalances without it."""
        # A new member may still wait on its JoinGroup: tell it to start over.
        answer_join(group, member, JoinResult(ErrorCode.UNKNOWN_MEMBER_ID, UNKNOWN_MEMBER_ID), out)
        group.remove(member.member_id)
        group_timers.cancel_member(group, member.member_id, out)
        if group.is_(GroupState.STABLE, GroupState.COMPLETING_REBALANCE):
            self.maybe_prepare(group, Event.MEMBER_REMOVED, now, out)
        elif group.is_(GroupState.PREPARING_REBALANCE):
            self.try_complete_join(group, now, out)
