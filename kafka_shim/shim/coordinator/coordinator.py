"""The classic group coordinator as a pure state machine (Kafka's GroupCoordinator).

Nothing here reads a clock, sleeps or does I/O: every call takes `now` (ms) and returns one
`Outcome` (outcome.py): its answer, the records to append to `__consumer_offsets`, the
deadlines to set or cancel, and the replies to JoinGroup and SyncGroup requests waiting
elsewhere, each named by the `Waiter` its request brought. The broker carries it out, as it
does the KIP-848 coordinator's. When a deadline passes the broker calls `on_timer`; a
deadline a call sets for its own `now` (a zero initial rebalance delay) fires within the
call, so it never waits for a timer. Deadlines are `GroupTimer`s (types.py).

The group's state changes only as the table `state.TRANSITIONS` says (state, event, action,
next state); the requests that leave it as it is answer as Kafka's do in each state.

Offsets committed inside a transaction (TxnOffsetCommit) wait in `TransactionalOffsets`
until `complete_transaction` is told how the producer's transaction ended; the marker in
`__consumer_offsets` that records it is written by the transaction's completion, not here.
`load` rebuilds the groups from the offsets log at start-up.
"""

from __future__ import annotations

import copy
import functools
import uuid
from collections.abc import Callable, Collection, Iterable
from typing import TypeVar

from kafka_shim.protocol.consumer_protocol import CONSUMER_PROTOCOL_TYPE
from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.protocol.offsets_records import OffsetsRecord, OffsetValue
from kafka_shim.shim.coordinator import offsets, records
from kafka_shim.shim.coordinator.config import CoordinatorConfig
from kafka_shim.shim.coordinator.group import Group, PendingJoin
from kafka_shim.shim.coordinator.member import Member
from kafka_shim.shim.coordinator.outcome import Effects, Outcome, Waiter
from kafka_shim.shim.coordinator.state import Event, GroupState
from kafka_shim.shim.coordinator.transactional import TransactionalOffsets
from kafka_shim.shim.coordinator.types import (
    UNKNOWN_MEMBER_ID,
    CommitRequest,
    FetchedOffset,
    GroupDescription,
    GroupListing,
    GroupSnapshot,
    GroupTimer,
    HeartbeatRequest,
    JoinRequest,
    JoinResult,
    LeaveResult,
    MemberDescription,
    MemberIdentity,
    MemberSnapshot,
    SyncRequest,
    SyncResult,
    TopicPartition,
    TxnCommitRequest,
)

T = TypeVar("T")

# Kafka expires a new member's pending JoinGroup after 5 minutes: it cannot heartbeat yet,
# and a client that gave up would otherwise linger in the rebalance.
NEW_MEMBER_JOIN_TIMEOUT_MS = 5 * 60 * 1000

RETENTION = GroupTimer("retention")


def random_member_id(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4()}"


def no_consumer_groups(group_id: str) -> frozenset[str] | None:
    return None


class GroupCoordinator:
    def __init__(
        self,
        config: CoordinatorConfig | None = None,
        new_member_id: Callable[[str], str] = random_member_id,
        consumer_group_topics: Callable[[str], frozenset[str] | None] = no_consumer_groups,
    ) -> None:
        """`consumer_group_topics(group_id)`: the topics the members of the KIP-848 consumer
        group of that id subscribe to (None: there is none). Such a group keeps its offsets
        here, in an empty entry, and they expire by Kafka's rules for consumer groups."""
        self.config = config or CoordinatorConfig()
        self._new_member_id = new_member_id
        self._consumer_group_topics = consumer_group_topics
        self._groups: dict[str, Group] = {}
        self._transactional = TransactionalOffsets()
        self._retention_scheduled = False

    def load(self, log: Iterable[OffsetsRecord], now: int) -> Outcome[None]:
        """Rebuild groups from the offsets log, as a coordinator taking over a partition does;
        the periodic retention check starts, as Kafka's does when it loads the partition."""
        out = Effects()
        for group in records.replay(log, now, self._transactional).values():
            self._groups[group.group_id] = group
            for member in group.members.values():  # each loaded member's session starts now
                self._schedule_heartbeat(group, member, now, out)
        self._schedule_retention(now, out)
        return out.outcome(None)

    # --- deadlines -----------------------------------------------------------------------

    def on_timer(self, key: GroupTimer, now: int) -> Outcome[None]:
        """A deadline this coordinator set has passed."""
        # Retention's pass keeps what it changes itself (it looks at every group).
        out = Effects() if key.kind == "retention" else self._undoable((key.group_id,))
        self._fire(key, now, out)
        return self._settle(out, now, None)

    def _settle(self, out: Effects, now: int, response: T) -> Outcome[T]:
        """Fire the deadlines this call set for `now` or earlier (firing may set more)."""
        while (key := out.due(now)) is not None:
            assert isinstance(key, GroupTimer)
            self._fire(key, now, out)
        return out.outcome(response)

    def _fire(self, key: GroupTimer, now: int, out: Effects) -> None:
        if key.kind == "retention":
            self._expire_offsets(now, out)
            return
        group = self._groups.get(key.group_id)
        if group is None:
            return
        if key.kind == "join":
            self._on_join_deadline(group, now, out)
        elif key.kind == "sync":
            self._on_sync_deadline(group, now, out)
        elif key.kind == "session":
            self._on_session_expired(group, key.member_id, now, out)
        elif key.kind == "pending":
            self._on_pending_member_expired(group, key.member_id, now, out)

    def _schedule_heartbeat(
        self, group: Group, member: Member, now: int, out: Effects, timeout_ms: int | None = None
    ) -> None:
        timeout = member.session_timeout_ms if timeout_ms is None else timeout_ms
        out.schedule(GroupTimer("session", group.group_id, member.member_id), now + timeout)

    def _undoable(self, group_ids: Iterable[str]) -> Effects:
        """Effects of a call that may write records, whose `undo` puts back the groups it may
        change as they are now: a deep copy, taken only for calls that are rare next to
        heartbeats and commits (joins, syncs, leaves, deadlines)."""
        out = Effects()
        saved = {group_id: copy.deepcopy(self._groups.get(group_id)) for group_id in group_ids}
        transactional = copy.deepcopy(self._transactional)
        retention_scheduled = self._retention_scheduled

        def undo() -> None:
            for group_id, group in saved.items():
                if group is None:
                    self._groups.pop(group_id, None)
                else:
                    self._groups[group_id] = group
            self._transactional = transactional
            self._retention_scheduled = retention_scheduled

        out.undo = undo
        return out

    def _cancel_member_timers(self, group: Group, member_id: str, out: Effects) -> None:
        out.cancel(GroupTimer("session", group.group_id, member_id))
        out.cancel(GroupTimer("pending", group.group_id, member_id))

    def _schedule_retention(self, now: int, out: Effects) -> None:
        if not self._retention_scheduled:
            self._retention_scheduled = True
            out.schedule(RETENTION, now + self.config.offsets_retention_check_interval_ms)

    # --- answers to waiting requests -----------------------------------------------------

    def _answer_join(self, member: Member, result: JoinResult, out: Effects) -> bool:
        """Answer the member's waiting JoinGroup, if it has one."""
        waiter, member.awaiting_join = member.awaiting_join, None
        if waiter is None:
            return False
        out.reply(waiter, result)
        return True

    def _answer_sync(self, member: Member, result: SyncResult, out: Effects) -> bool:
        """Answer the member's waiting SyncGroup, if it has one."""
        waiter, member.awaiting_sync = member.awaiting_sync, None
        if waiter is None:
            return False
        out.reply(waiter, result)
        return True

    # --- groups --------------------------------------------------------------------------

    def group(self, group_id: str) -> Group | None:
        """The live group (read-only use: tests and descriptions)."""
        return self._groups.get(group_id)

    def _create_group(self, group_id: str, now: int, out: Effects) -> Group:
        group = Group(group_id, now)
        self._groups[group_id] = group
        self._schedule_retention(now, out)
        return group

    def _kill_group(self, group: Group, now: int, out: Effects) -> None:
        """Dead: gone from the registry at once, so later requests find no such group."""
        group.transition(Event.GROUP_DELETED, now)
        del self._groups[group.group_id]
        pending = sorted(self._transactional.partitions(group.group_id) - group.offsets.keys())
        self._remove_offsets(group, [*group.offsets, *pending], out)
        out.records.append(records.group_tombstone(group.group_id))
        self._cancel_group_timers(group, out)

    def _cancel_group_timers(self, group: Group, out: Effects) -> None:
        """Cancel the group's join and sync deadlines and every member's (pending ones too)."""
        for kind in ("join", "sync"):
            out.cancel(GroupTimer(kind, group.group_id))
        for member_id in [*group.members, *group.pending_members]:
            self._cancel_member_timers(group, member_id, out)

    # --- online migration (KIP-848) -------------------------------------------------------

    def snapshot_group(self, group_id: str) -> GroupSnapshot | None:
        """A group's members as they are (None if it has none), for a consumer group to take."""
        group = self._groups.get(group_id)
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

    def release_group(self, group_id: str, now: int) -> Outcome[None]:
        """Hand a group's members over to a consumer group: waiting joins and syncs are told
        REBALANCE_IN_PROGRESS, the members leave without a rebalance, and the group stays an
        Empty entry that keeps its offsets (its metadata record is tombstoned, as Kafka
        deletes the classic group)."""
        out = self._undoable((group_id,))
        group = self._groups[group_id]
        self._cancel_group_timers(group, out)
        for member_id in [*group.members, *group.pending_members]:
            member = group.members.get(member_id)
            if member is not None:
                self._answer_join(member, JoinResult(ErrorCode.REBALANCE_IN_PROGRESS, member_id), out)
                self._answer_sync(member, SyncResult(ErrorCode.REBALANCE_IN_PROGRESS), out)
            group.remove(member_id)
        group.pending_join = None
        group.restore_empty(group.generation_id, group.protocol_type, now)
        out.records.append(records.group_tombstone(group_id))
        return out.outcome(None)

    def adopt_group(self, snapshot: GroupSnapshot, now: int) -> Outcome[None]:
        """A consumer group whose members all use the classic protocol becomes classic again
        (Kafka's ClassicGroup.fromConsumerGroup): Stable at the consumer group's epoch with
        the members' assignments, then a rebalance, so the members rejoin as classic ones."""
        out = self._undoable((snapshot.group_id,))
        group = self._groups.get(snapshot.group_id) or self._create_group(snapshot.group_id, now, out)
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
            self._schedule_heartbeat(group, member, now, out)
        group.generation_id = snapshot.generation_id
        group.protocol_name = group.select_protocol()
        group.subscribed_topics = None  # unknown until the rebalance ends: every topic counts
        group.state, group.state_since_ms = GroupState.STABLE, now  # as Kafka builds it, not a transition
        out.records.append(records.group_record(group))
        # The members changed under it: every one must rejoin as a classic member.
        self._prepare_rebalance(group, Event.MEMBERS_CHANGED, now, out)
        return self._settle(out, now, None)

    # --- JoinGroup -----------------------------------------------------------------------

    def join_group(self, request: JoinRequest, now: int, waiter: Waiter) -> Outcome[None]:
        """The answer goes to `waiter` among the replies, of this call or a later one."""
        out = self._undoable((request.group_id,))
        self._join_group(request, now, waiter, out)
        return self._settle(out, now, None)

    def _join_group(self, request: JoinRequest, now: int, waiter: Waiter, out: Effects) -> None:
        if not request.group_id:
            return out.reply(waiter, JoinResult(ErrorCode.INVALID_GROUP_ID, request.member_id))
        if not self.config.allows_session_timeout(request.session_timeout_ms):
            return out.reply(waiter, JoinResult(ErrorCode.INVALID_SESSION_TIMEOUT, request.member_id))
        is_unknown = request.member_id == UNKNOWN_MEMBER_ID
        group = self._groups.get(request.group_id)
        if group is None:
            if not is_unknown:  # a member id for a group that does not exist
                return out.reply(waiter, JoinResult(ErrorCode.UNKNOWN_MEMBER_ID, request.member_id))
            group = self._create_group(request.group_id, now, out)

        if not self._accepts_joining_member(group, request.member_id):
            if group.remove(request.member_id) is not None:
                self._cancel_member_timers(group, request.member_id, out)
            out.reply(waiter, JoinResult(ErrorCode.GROUP_MAX_SIZE_REACHED, UNKNOWN_MEMBER_ID))
        elif is_unknown:
            self._join_new_member(group, request, now, waiter, out)
        else:
            self._join_current_member(group, request, now, waiter, out)
        self._try_complete_join(group, now, out)
        return None

    def _accepts_joining_member(self, group: Group, member_id: str) -> bool:
        limit = self.config.max_group_size
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
                out.reply(waiter, self._join_result(group, member, with_members=group.is_leader(member_id)))
            else:
                self._update_member_and_rebalance(group, member, request, now, waiter, out)
        elif group.is_(GroupState.STABLE):
            if group.is_leader(member_id) or not member.matches(request.protocols):
                # A leader's rejoin forces a rebalance: it may have seen metadata change.
                self._update_member_and_rebalance(group, member, request, now, waiter, out)
            else:
                out.reply(waiter, self._join_result(group, member, with_members=False))
        else:
            out.reply(waiter, JoinResult(ErrorCode.UNKNOWN_MEMBER_ID, member_id))
        return None

    def _join_result(
        self, group: Group, member: Member, *, with_members: bool, leader: str | None = None
    ) -> JoinResult:
        return JoinResult(
            ErrorCode.NONE,
            member.member_id,
            generation_id=group.generation_id,
            protocol_type=group.protocol_type,
            protocol_name=group.protocol_name,
            leader=(group.leader_id or "") if leader is None else leader,
            members=group.current_member_metadata() if with_members else (),
        )

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
        self._schedule_heartbeat(group, member, now, out, NEW_MEMBER_JOIN_TIMEOUT_MS)
        self._maybe_prepare_rebalance(group, Event.MEMBERS_CHANGED, now, out)

    def _update_member_and_rebalance(
        self, group: Group, member: Member, request: JoinRequest, now: int, waiter: Waiter, out: Effects
    ) -> None:
        group.update_member(
            member, request.protocols, request.rebalance_timeout_ms, request.session_timeout_ms, waiter
        )
        self._maybe_prepare_rebalance(group, Event.MEMBERS_CHANGED, now, out)

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
        self._answer_join(old, JoinResult(ErrorCode.FENCED_INSTANCE_ID, old_id), out)
        self._answer_sync(old, SyncResult(ErrorCode.FENCED_INSTANCE_ID), out)
        member = group.replace_static_member(request.group_instance_id, old_id, new_id)
        out.cancel(GroupTimer("session", group.group_id, old_id))
        self._schedule_heartbeat(group, member, now, out)
        group.update_member(
            member, request.protocols, request.rebalance_timeout_ms, request.session_timeout_ms, waiter
        )
        if group.is_(GroupState.STABLE):
            if group.select_protocol() != group.protocol_name:
                self._maybe_prepare_rebalance(group, Event.MEMBERS_CHANGED, now, out)
                return
            # The group keeps its generation under the new member id: Kafka persists that.
            out.records.append(records.group_record(group))
            if request.supports_skip_assignment:
                # v9+: the leader learns it leads but skips the assignor; the group stays Stable.
                is_leader = group.is_leader(new_id)
                result = self._join_result(group, member, with_members=is_leader)
                self._answer_join(member, result._replace(skip_assignment=is_leader), out)
            else:
                # Older clients get the old leader id, so a restarted leader does not
                # compute an assignment a Stable group would not hand out.
                self._answer_join(
                    member, self._join_result(group, member, with_members=False, leader=old_leader), out
                )
        elif group.is_(GroupState.COMPLETING_REBALANCE):
            # The leader may already be assigning to the old member id.
            self._prepare_rebalance(group, Event.MEMBERS_CHANGED, now, out)

    # --- rebalance -----------------------------------------------------------------------

    def _maybe_prepare_rebalance(self, group: Group, event: Event, now: int, out: Effects) -> None:
        if group.can_rebalance:
            self._prepare_rebalance(group, event, now, out)

    def _prepare_rebalance(self, group: Group, event: Event, now: int, out: Effects) -> None:
        if group.is_(GroupState.COMPLETING_REBALANCE):
            self._reset_and_propagate_assignment_error(group, ErrorCode.REBALANCE_IN_PROGRESS, now, out)
        group.pending_sync.clear()
        out.cancel(GroupTimer("sync", group.group_id))
        if group.is_(GroupState.EMPTY):
            delay = self.config.initial_rebalance_delay_ms
            group.pending_join = PendingJoin(
                initial=True, delay_ms=delay, remaining_ms=max(group.rebalance_timeout_ms - delay, 0)
            )
            out.schedule(GroupTimer("join", group.group_id), now + delay)
        else:
            group.pending_join = PendingJoin(initial=False)
            out.schedule(GroupTimer("join", group.group_id), now + group.rebalance_timeout_ms)
        group.transition(event, now)
        self._try_complete_join(group, now, out)

    def _try_complete_join(self, group: Group, now: int, out: Effects) -> None:
        """The delayed join completes as soon as every known member has rejoined."""
        pending = group.pending_join
        if (
            group.is_(GroupState.PREPARING_REBALANCE)
            and pending is not None
            and not pending.initial
            and group.has_all_members_joined
        ):
            self._complete_join(group, now, out)

    def _on_join_deadline(self, group: Group, now: int, out: Effects) -> None:
        pending = group.pending_join
        if pending is None:
            return
        if pending.initial and group.new_member_added and pending.remaining_ms != 0:
            # Members keep arriving: wait another delay, within the rebalance timeout.
            group.new_member_added = False
            delay = min(self.config.initial_rebalance_delay_ms, pending.remaining_ms)
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
                self._cancel_member_timers(group, member.member_id, out)

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
            result = self._join_result(group, member, with_members=group.is_leader(member.member_id))
            self._answer_join(member, result, out)
            self._schedule_heartbeat(group, member, now, out)
            member.is_new = False
            group.pending_sync.add(member.member_id)
        out.schedule(GroupTimer("sync", group.group_id), now + group.rebalance_timeout_ms)

    def _on_sync_deadline(self, group: Group, now: int, out: Effects) -> None:
        """Members that never sent SyncGroup for this generation are removed, and the group rebalances."""
        if not group.is_(GroupState.COMPLETING_REBALANCE, GroupState.STABLE) or not group.pending_sync:
            return
        for member_id in list(group.pending_sync):
            group.remove(member_id)
            self._cancel_member_timers(group, member_id, out)
        self._prepare_rebalance(group, Event.MEMBER_REMOVED, now, out)

    def _reset_and_propagate_assignment_error(
        self, group: Group, error: ErrorCode, now: int, out: Effects
    ) -> None:
        for member in group.members.values():
            member.assignment = b""
        self._propagate_assignment(group, error, now, out)

    def _propagate_assignment(self, group: Group, error: ErrorCode, now: int, out: Effects) -> None:
        ok = error == ErrorCode.NONE
        for member in group.members.values():
            result = SyncResult(
                error,
                group.protocol_type if ok else None,
                group.protocol_name if ok else None,
                member.assignment,
            )
            if self._answer_sync(member, result, out):
                # Its session may have lapsed while it waited for the leader.
                self._schedule_heartbeat(group, member, now, out)

    # --- SyncGroup -----------------------------------------------------------------------

    def sync_group(self, request: SyncRequest, now: int, waiter: Waiter) -> Outcome[None]:
        """The answer goes to `waiter` among the replies, of this call or a later one."""
        out = self._undoable((request.group_id,))
        self._sync_group(request, now, waiter, out)
        return self._settle(out, now, None)

    def _sync_group(self, request: SyncRequest, now: int, waiter: Waiter, out: Effects) -> None:
        if not request.group_id:
            return out.reply(waiter, SyncResult(ErrorCode.INVALID_GROUP_ID))
        group = self._groups.get(request.group_id)
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
            member.awaiting_sync = waiter
            self._synced(group, request.member_id, out)
            if group.is_leader(request.member_id):
                for member_id, each in group.members.items():
                    each.assignment = request.assignments.get(member_id, b"")
                self._propagate_assignment(group, ErrorCode.NONE, now, out)
                group.transition(Event.LEADER_SYNCED, now)
                out.records.append(records.group_record(group))
        else:  # Stable: a retry, or a follower that joined late; it gets what the leader assigned
            self._synced(group, request.member_id, out)
            answer = SyncResult(ErrorCode.NONE, group.protocol_type, group.protocol_name, member.assignment)
            out.reply(waiter, answer)
            self._schedule_heartbeat(group, member, now, out)
        return None

    def _synced(self, group: Group, member_id: str, out: Effects) -> None:
        group.pending_sync.discard(member_id)
        if not group.pending_sync:
            out.cancel(GroupTimer("sync", group.group_id))

    # --- Heartbeat -----------------------------------------------------------------------

    def heartbeat(self, request: HeartbeatRequest, now: int) -> Outcome[ErrorCode]:
        out = Effects()
        return self._settle(out, now, self._heartbeat(request, now, out))

    def _heartbeat(self, request: HeartbeatRequest, now: int, out: Effects) -> ErrorCode:
        if not request.group_id:
            return ErrorCode.INVALID_GROUP_ID
        group = self._groups.get(request.group_id)
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
        self._schedule_heartbeat(group, group.members[request.member_id], now, out)
        if group.is_(GroupState.PREPARING_REBALANCE):
            return ErrorCode.REBALANCE_IN_PROGRESS
        return ErrorCode.NONE

    def _on_session_expired(self, group: Group, member_id: str, now: int, out: Effects) -> None:
        member = group.members.get(member_id)
        if member is None:
            return
        waiting = member.awaiting_join is not None or member.awaiting_sync is not None
        if member.is_new or not waiting:
            self._remove_member_and_update_group(group, member, now, out)
        # A member waiting on a rebalance is alive; its session restarts when it is answered.

    def _on_pending_member_expired(self, group: Group, member_id: str, now: int, out: Effects) -> None:
        if member_id in group.pending_members:
            group.pending_members.discard(member_id)
            self._try_complete_join(group, now, out)

    def _remove_member_and_update_group(self, group: Group, member: Member, now: int, out: Effects) -> None:
        # A new member may still wait on its JoinGroup: tell it to start over.
        self._answer_join(member, JoinResult(ErrorCode.UNKNOWN_MEMBER_ID, UNKNOWN_MEMBER_ID), out)
        group.remove(member.member_id)
        self._cancel_member_timers(group, member.member_id, out)
        if group.is_(GroupState.STABLE, GroupState.COMPLETING_REBALANCE):
            self._maybe_prepare_rebalance(group, Event.MEMBER_REMOVED, now, out)
        elif group.is_(GroupState.PREPARING_REBALANCE):
            self._try_complete_join(group, now, out)

    # --- LeaveGroup ----------------------------------------------------------------------

    def leave_group(self, group_id: str, leaving: Iterable[MemberIdentity], now: int) -> Outcome[LeaveResult]:
        out = self._undoable((group_id,))
        return self._settle(out, now, self._leave_group(group_id, list(leaving), now, out))

    def _leave_group(
        self, group_id: str, leaving: list[MemberIdentity], now: int, out: Effects
    ) -> LeaveResult:
        if not group_id:
            return LeaveResult(ErrorCode.INVALID_GROUP_ID)
        group = self._groups.get(group_id)
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
            self._remove_member_and_update_group(group, group.members[current], now, out)
            return ErrorCode.NONE
        if identity.member_id in group.pending_members:
            group.pending_members.discard(identity.member_id)
            out.cancel(GroupTimer("pending", group.group_id, identity.member_id))
            self._try_complete_join(group, now, out)
            return ErrorCode.NONE
        error = offsets.validate_member(group, identity.member_id, identity.group_instance_id)
        if error is not None:
            return error
        self._remove_member_and_update_group(group, group.members[identity.member_id], now, out)
        return ErrorCode.NONE

    # --- offsets -------------------------------------------------------------------------

    def commit_offsets(self, request: CommitRequest, now: int) -> Outcome[dict[TopicPartition, ErrorCode]]:
        out = Effects()
        return self._settle(out, now, self._commit_offsets(request, now, out))

    def _commit_offsets(
        self, request: CommitRequest, now: int, out: Effects
    ) -> dict[TopicPartition, ErrorCode]:
        def all_fail(error: ErrorCode) -> dict[TopicPartition, ErrorCode]:
            return dict.fromkeys(request.offsets, error)

        group = self._groups.get(request.group_id)
        created = group is None
        retention_scheduled = self._retention_scheduled
        if group is None:
            if request.generation_id >= 0:
                return all_fail(ErrorCode.ILLEGAL_GENERATION)  # a member of a generation that is gone
            group = self._create_group(request.group_id, now, out)
        error = offsets.validate_commit(
            group, request.generation_id, request.member_id, request.group_instance_id
        )
        if error is not None:
            return all_fail(error)
        if group.is_(GroupState.COMPLETING_REBALANCE):
            # A valid member of the new generation that has not synced yet: let it retry.
            return all_fail(ErrorCode.REBALANCE_IN_PROGRESS)
        if group.is_(GroupState.STABLE, GroupState.PREPARING_REBALANCE):
            # Committing is a sign of life; the heartbeat will tell it of a rebalance.
            self._schedule_heartbeat(group, group.members[request.member_id], now, out)
        accepted, errors = offsets.accept(request.offsets, now, self.config.offset_metadata_max_bytes)
        out.undo = self._commit_undo(group, accepted, retention_scheduled if created else None)
        offsets.store(group, accepted, out.records)
        for tp in accepted:  # written after any transactional offset pending for it
            self._transactional.supersede(group.group_id, tp)
        return errors

    def _commit_undo(
        self, group: Group, accepted: Collection[TopicPartition], created_retention: bool | None
    ) -> Callable[[], None]:
        """What puts a commit back, cheaply (commits are the hot path): the partitions'
        previous offsets, parked transactional offsets, or the group the commit made
        (`created_retention`: whether retention was scheduled before it; None: it existed)."""
        previous = {tp: group.offsets.get(tp) for tp in accepted}
        transactional = self._transactional
        if transactional.has_open_transactions(group.group_id):
            transactional = copy.deepcopy(transactional)

        def undo() -> None:
            if created_retention is not None:
                del self._groups[group.group_id]
                self._retention_scheduled = created_retention
            for tp, offset in previous.items():
                if offset is None:
                    group.offsets.pop(tp, None)
                else:
                    group.offsets[tp] = offset
            self._transactional = transactional

        return undo

    def commit_transactional_offsets(
        self, request: TxnCommitRequest, now: int
    ) -> Outcome[dict[TopicPartition, ErrorCode]]:
        """TxnOffsetCommit, once the producer's transaction holds the group's offsets
        partition (the transaction coordinator checks that first). The offsets are
        written as the producer's transactional records and stay pending until
        `complete_transaction`."""
        out = self._undoable((request.group_id,))
        return self._settle(out, now, self._commit_transactional_offsets(request, now, out))

    def _commit_transactional_offsets(
        self, request: TxnCommitRequest, now: int, out: Effects
    ) -> dict[TopicPartition, ErrorCode]:
        def all_fail(error: ErrorCode) -> dict[TopicPartition, ErrorCode]:
            return dict.fromkeys(request.offsets, error)

        if not request.group_id:
            return all_fail(ErrorCode.INVALID_GROUP_ID)
        group = self._groups.get(request.group_id)
        if group is None:
            if request.generation_id >= 0:
                return all_fail(ErrorCode.ILLEGAL_GENERATION)
            group = self._create_group(request.group_id, now, out)
        error = offsets.validate_commit(
            group, request.generation_id, request.member_id, request.group_instance_id, transactional=True
        )
        if error is not None:
            return all_fail(error)
        # Unlike OffsetCommit, Kafka neither refuses a group completing a rebalance nor
        # counts this as a heartbeat.
        accepted, errors = offsets.accept(request.offsets, now, self.config.offset_metadata_max_bytes)
        for tp, committed in accepted.items():
            self._transactional.add(request.producer_id, group.group_id, tp, committed)
            out.records.append(
                records.offset_record(
                    group.group_id, tp, committed, request.producer_id, request.producer_epoch
                )
            )
        return errors

    def complete_transaction(self, producer_id: int, commit: bool, now: int) -> Outcome[None]:
        """The producer's transaction ended (its marker is in `__consumer_offsets`): its
        pending offsets become the groups' committed offsets, or are dropped on abort.
        Nothing new is written: replay applies the marker to the same records."""
        for group_id, visible in self._transactional.complete(producer_id, commit).items():
            group = self._groups.get(group_id)
            if group is not None:  # a deleted group's pending offsets went with it
                group.offsets.update(visible)
        return Outcome(None)

    def fetch_offsets(
        self, group_id: str, partitions: Iterable[TopicPartition] | None, require_stable: bool = False
    ) -> dict[TopicPartition, FetchedOffset]:
        """require_stable (OffsetFetch v7+): partitions with a transactional offset
        pending answer UNSTABLE_OFFSET_COMMIT; the client retries until it completes."""
        if not require_stable:
            return offsets.fetch(self._groups.get(group_id), partitions)
        return offsets.fetch(
            self._groups.get(group_id),
            partitions,
            lambda tp: self._transactional.is_pending(group_id, tp),
        )

    def delete_offsets(
        self, group_id: str, partitions: Iterable[TopicPartition], now: int
    ) -> Outcome[tuple[ErrorCode, dict[TopicPartition, ErrorCode]]]:
        if not group_id:
            return Outcome((ErrorCode.INVALID_GROUP_ID, {}))
        group = self._groups.get(group_id)
        if group is None:
            return Outcome((ErrorCode.GROUP_ID_NOT_FOUND, {}))
        wanted = list(partitions)
        if group.is_(GroupState.EMPTY):
            deletable, errors = wanted, {}
        elif group.protocol_type == CONSUMER_PROTOCOL_TYPE:
            deletable = [tp for tp in wanted if not group.is_subscribed_to(tp.topic)]
            errors = {
                tp: ErrorCode.GROUP_SUBSCRIBED_TO_TOPIC for tp in wanted if group.is_subscribed_to(tp.topic)
            }
        else:
            return Outcome((ErrorCode.NON_EMPTY_GROUP, {}))
        out = self._undoable((group_id,))
        self._remove_offsets(group, deletable, out)
        errors.update(dict.fromkeys(deletable, ErrorCode.NONE))
        # The group stays, Empty, until the next retention check removes it (Kafka's
        # OffsetMetadataManager.deleteOffsets writes only tombstones; its periodic
        # cleanupGroupMetadata deletes a group left Empty without offsets), except where the
        # emulated release's coordinator buries it at once (Kafka 3.9's).
        if deletable and self.config.offset_delete_removes_empty_group:
            self._maybe_bury(group, now, out)
        return out.outcome((ErrorCode.NONE, errors))

    def _remove_offsets(self, group: Group, partitions: Iterable[TopicPartition], out: Effects) -> None:
        """Committed and pending offsets go; a partition with only pending ones gets
        its tombstone too (Kafka's replay drops pending offsets at a tombstone)."""
        wanted = list(partitions)
        dropped = self._transactional.discard(group.group_id, wanted)
        only_pending = [tp for tp in wanted if tp in dropped and tp not in group.offsets]
        offsets.remove(group, wanted, out.records)
        out.records.extend(records.offset_tombstone(group.group_id, tp) for tp in only_pending)

    def _maybe_bury(self, group: Group, now: int, out: Effects) -> None:
        # A group with transactions open stays: they may still commit offsets into it.
        if (
            group.is_(GroupState.EMPTY)
            and not group.offsets
            and not self._transactional.has_open_transactions(group.group_id)
        ):
            self._kill_group(group, now, out)

    def _expire_offsets(self, now: int, out: Effects) -> None:
        # Its undo keeps only the groups it changes: their offsets and state (a group buried
        # goes back into the registry), not a copy of every group.
        changed: list[tuple[Group, dict[TopicPartition, OffsetValue], GroupState, int]] = []
        groups = dict(self._groups)
        transactional = copy.deepcopy(self._transactional)

        def undo() -> None:
            for group, kept, state, since in changed:
                group.offsets, group.state, group.state_since_ms = kept, state, since
            self._groups.clear()
            self._groups.update(groups)
            self._transactional = transactional
            self._retention_scheduled = True

        out.undo = undo
        self._retention_scheduled = False
        for group in list(self._groups.values()):
            retention = self.config.offsets_retention_ms
            pending = functools.partial(self._transactional.is_pending, group.group_id)
            consumer_topics = self._consumer_group_topics(group.group_id)
            expired = offsets.expired(group, now, retention, pending, consumer_topics)
            if expired or (group.is_(GroupState.EMPTY) and not group.offsets):
                changed.append((group, dict(group.offsets), group.state, group.state_since_ms))
            offsets.remove(group, expired, out.records)
            self._maybe_bury(group, now, out)
        self._schedule_retention(now, out)

    # --- administration ------------------------------------------------------------------

    def describe_group(self, group_id: str) -> GroupDescription:
        group = self._groups.get(group_id)
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

    def list_groups(self, states: Collection[str] = (), types: Collection[str] = ()) -> list[GroupListing]:
        """Empty filters match everything; states match case-insensitively; every group is classic."""
        wanted_states = {s.lower() for s in states}
        if types and "classic" not in {t.lower() for t in types}:
            return []
        return [
            GroupListing(g.group_id, g.protocol_type or "", g.state.value)
            for g in self._groups.values()
            if not wanted_states or g.state.value.lower() in wanted_states
        ]

    def delete_groups(self, group_ids: Iterable[str], now: int) -> Outcome[dict[str, ErrorCode]]:
        group_ids = list(group_ids)
        out = self._undoable(group_ids)
        results: dict[str, ErrorCode] = {}
        for group_id in group_ids:
            group = self._groups.get(group_id)
            if group is None:
                results[group_id] = ErrorCode.GROUP_ID_NOT_FOUND
            elif not group.is_(GroupState.EMPTY):
                results[group_id] = ErrorCode.NON_EMPTY_GROUP
            else:
                self._kill_group(group, now, out)  # its offsets go with it
                results[group_id] = ErrorCode.NONE
        return out.outcome(results)


def _claims_match(request: SyncRequest, group: Group) -> bool:
    """SyncGroup v5+ name the protocol they think the group uses; it must be the group's."""
    if request.protocol_type is not None and request.protocol_type != group.protocol_type:
        return False
    return request.protocol_name is None or request.protocol_name == group.protocol_name
