"""The classic group coordinator as a pure state machine (Kafka's GroupCoordinator).

Nothing here reads a clock, sleeps or does I/O: every call takes `now` (ms).
JoinGroup and SyncGroup answer through a `respond` callback, at once or later
from another member's request or from `tick`. The caller runs `tick(now)` when
`next_deadline()` passes; every public call also fires whatever became due by
its `now`, so a zero delay never waits for a timer.

Kafka's purgatories become deadlines by key:
  ("join", group)            the delayed join (rebalance timeout, or initial delay)
  ("sync", group)            members that must SyncGroup within the rebalance timeout
  ("session", group, member) heartbeat expiry
  ("pending", group, member) a member id handed out by MEMBER_ID_REQUIRED, unused
  ("retention",)             the periodic offsets retention check

Offsets committed inside a transaction (TxnOffsetCommit) wait in
`TransactionalOffsets` until `complete_transaction` is told how the producer's
transaction ended; the marker in `__consumer_offsets` that records it is written
by the transaction's completion, not here.

Every change to offsets or group metadata is also queued as an offsets-log
record (`take_records`); at the end of each public call the coordinator calls
`on_records` if any are queued, and its owner appends them to
`__consumer_offsets`. `load` rebuilds the groups from those records at start-up.
"""

from __future__ import annotations

import functools
import uuid
from collections.abc import Callable, Collection, Hashable, Iterable

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.protocol.offsets_records import OffsetsRecord
from kafka_shim.shim.coordinator import offsets, records
from kafka_shim.shim.coordinator.config import CoordinatorConfig
from kafka_shim.shim.coordinator.group import Group, PendingJoin
from kafka_shim.shim.coordinator.member import Member
from kafka_shim.shim.coordinator.state import GroupState
from kafka_shim.shim.coordinator.subscription import CONSUMER_PROTOCOL_TYPE
from kafka_shim.shim.coordinator.timers import Deadlines
from kafka_shim.shim.coordinator.transactional import TransactionalOffsets
from kafka_shim.shim.coordinator.types import (
    UNKNOWN_MEMBER_ID,
    CommitRequest,
    FetchedOffset,
    GroupDescription,
    GroupListing,
    GroupSnapshot,
    HeartbeatRequest,
    JoinCallback,
    JoinRequest,
    JoinResult,
    LeaveResult,
    MemberDescription,
    MemberIdentity,
    MemberSnapshot,
    SyncCallback,
    SyncRequest,
    SyncResult,
    TopicPartition,
    TxnCommitRequest,
)

# Kafka expires a new member's pending JoinGroup after 5 minutes: it cannot heartbeat yet,
# and a client that gave up would otherwise linger in the rebalance.
NEW_MEMBER_JOIN_TIMEOUT_MS = 5 * 60 * 1000


def random_member_id(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4()}"


class GroupCoordinator:
    def __init__(
        self,
        config: CoordinatorConfig | None = None,
        new_member_id: Callable[[str], str] = random_member_id,
    ) -> None:
        self.config = config or CoordinatorConfig()
        self._new_member_id = new_member_id
        self._groups: dict[str, Group] = {}
        self._deadlines = Deadlines()
        self._records: list[OffsetsRecord] = []
        self._transactional = TransactionalOffsets()
        # Called when a public call leaves records queued; the broker appends them.
        self.on_records: Callable[[], None] = lambda: None

    # --- the offsets log -----------------------------------------------------------------

    def take_records(self) -> list[OffsetsRecord]:
        """The records queued since the last call, oldest first."""
        taken, self._records = self._records, []
        return taken

    def _publish(self) -> None:
        if self._records:
            self.on_records()

    def load(self, log: Iterable[OffsetsRecord], now: int) -> None:
        """Rebuild groups from the offsets log, as a coordinator taking over a partition does."""
        for group in records.replay(log, now, self._transactional).values():
            self._groups[group.group_id] = group
        if self._groups and ("retention",) not in self._deadlines:
            self._deadlines.schedule(("retention",), now + self.config.offsets_retention_check_interval_ms)

    # --- timers --------------------------------------------------------------------------

    def next_deadline(self) -> int | None:
        return self._deadlines.earliest()

    def tick(self, now: int) -> None:
        """Fire every deadline due by `now`, earliest first (firing may schedule more)."""
        while (key := self._deadlines.pop_due(now)) is not None:
            self._fire(key, now)
        self._publish()

    def _fire(self, key: Hashable, now: int) -> None:
        assert isinstance(key, tuple)
        kind, *rest = key
        if kind == "retention":
            self._expire_offsets(now)
            return
        group = self._groups.get(rest[0])
        if group is None:
            return
        if kind == "join":
            self._on_join_deadline(group, now)
        elif kind == "sync":
            self._on_sync_deadline(group, now)
        elif kind == "session":
            self._on_session_expired(group, rest[1], now)
        elif kind == "pending":
            self._on_pending_member_expired(group, rest[1], now)

    def _schedule_heartbeat(
        self, group: Group, member: Member, now: int, timeout_ms: int | None = None
    ) -> None:
        timeout = member.session_timeout_ms if timeout_ms is None else timeout_ms
        self._deadlines.schedule(("session", group.group_id, member.member_id), now + timeout)

    def _cancel_member_timers(self, group: Group, member_id: str) -> None:
        self._deadlines.cancel(("session", group.group_id, member_id))
        self._deadlines.cancel(("pending", group.group_id, member_id))

    # --- groups --------------------------------------------------------------------------

    def group(self, group_id: str) -> Group | None:
        """The live group (read-only use: tests and descriptions)."""
        return self._groups.get(group_id)

    def _create_group(self, group_id: str, now: int) -> Group:
        group = Group(group_id, now)
        self._groups[group_id] = group
        if ("retention",) not in self._deadlines:
            self._deadlines.schedule(("retention",), now + self.config.offsets_retention_check_interval_ms)
        return group

    def _kill_group(self, group: Group, now: int) -> None:
        """Dead: gone from the registry at once, so later requests find no such group."""
        group.transition(GroupState.DEAD, now)
        del self._groups[group.group_id]
        pending = sorted(self._transactional.partitions(group.group_id) - group.offsets.keys())
        self._remove_offsets(group, [*group.offsets, *pending])
        self._records.append(records.group_tombstone(group.group_id))
        for key in (("join", group.group_id), ("sync", group.group_id)):
            self._deadlines.cancel(key)
        for member_id in [*group.members, *group.pending_members]:
            self._cancel_member_timers(group, member_id)

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

    def release_group(self, group_id: str, now: int) -> None:
        """Hand a group's members over to a consumer group: waiting joins and syncs are told
        REBALANCE_IN_PROGRESS, the members leave without a rebalance, and the group stays an
        Empty entry that keeps its offsets (its metadata record is tombstoned, as Kafka
        deletes the classic group)."""
        group = self._groups[group_id]
        for member_id in [*group.members, *group.pending_members]:
            member = group.members.get(member_id)
            if member is not None:
                group.invoke_join(member, JoinResult(ErrorCode.REBALANCE_IN_PROGRESS, member_id))
                group.invoke_sync(member, SyncResult(ErrorCode.REBALANCE_IN_PROGRESS))
            group.remove(member_id)
            self._cancel_member_timers(group, member_id)
        for key in (("join", group_id), ("sync", group_id)):
            self._deadlines.cancel(key)
        group.pending_join = None
        group.restore_empty(group.generation_id, group.protocol_type, now)
        self._records.append(records.group_tombstone(group_id))
        self._publish()

    def adopt_group(self, snapshot: GroupSnapshot, now: int) -> None:
        """A consumer group whose members all use the classic protocol becomes classic again
        (Kafka's ClassicGroup.fromConsumerGroup): Stable at the consumer group's epoch with
        the members' assignments, then a rebalance, so the members rejoin as classic ones."""
        group = self._groups.get(snapshot.group_id) or self._create_group(snapshot.group_id, now)
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
            self._schedule_heartbeat(group, member, now)
        group.generation_id = snapshot.generation_id
        group.protocol_name = group.select_protocol()
        group.subscribed_topics = None  # unknown until the rebalance ends: every topic counts
        group.state, group.state_since_ms = GroupState.STABLE, now  # as Kafka builds it, not a transition
        self._records.append(records.group_record(group))
        self._prepare_rebalance(group, now)
        self._publish()

    # --- JoinGroup -----------------------------------------------------------------------

    def join_group(self, request: JoinRequest, now: int, respond: JoinCallback) -> None:
        self._join_group(request, now, respond)
        self.tick(now)

    def _join_group(self, request: JoinRequest, now: int, respond: JoinCallback) -> None:
        if not request.group_id:
            return respond(JoinResult(ErrorCode.INVALID_GROUP_ID, request.member_id))
        if not (
            self.config.min_session_timeout_ms
            <= request.session_timeout_ms
            <= self.config.max_session_timeout_ms
        ):
            return respond(JoinResult(ErrorCode.INVALID_SESSION_TIMEOUT, request.member_id))
        is_unknown = request.member_id == UNKNOWN_MEMBER_ID
        group = self._groups.get(request.group_id)
        if group is None:
            if not is_unknown:  # a member id for a group that does not exist
                return respond(JoinResult(ErrorCode.UNKNOWN_MEMBER_ID, request.member_id))
            group = self._create_group(request.group_id, now)

        if not self._accepts_joining_member(group, request.member_id):
            if group.remove(request.member_id) is not None:
                self._cancel_member_timers(group, request.member_id)
            respond(JoinResult(ErrorCode.GROUP_MAX_SIZE_REACHED, UNKNOWN_MEMBER_ID))
        elif is_unknown:
            self._join_new_member(group, request, now, respond)
        else:
            self._join_current_member(group, request, now, respond)
        self._try_complete_join(group, now)
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

    def _join_new_member(self, group: Group, request: JoinRequest, now: int, respond: JoinCallback) -> None:
        names = {p.name for p in request.protocols}
        if not group.supports_protocols(request.protocol_type, names):
            return respond(JoinResult(ErrorCode.INCONSISTENT_GROUP_PROTOCOL, UNKNOWN_MEMBER_ID))
        instance_id = request.group_instance_id
        new_id = self._new_member_id(instance_id if instance_id is not None else request.client_id)
        if instance_id is not None:
            old_id = group.static_members.get(instance_id)
            if old_id is not None:
                return self._replace_static_member(group, request, old_id, new_id, now, respond)
        elif request.require_known_member_id:
            group.pending_members.add(new_id)
            self._deadlines.schedule(("pending", group.group_id, new_id), now + request.session_timeout_ms)
            return respond(JoinResult(ErrorCode.MEMBER_ID_REQUIRED, new_id))
        self._add_member_and_rebalance(group, request, new_id, now, respond)
        return None

    def _join_current_member(
        self, group: Group, request: JoinRequest, now: int, respond: JoinCallback
    ) -> None:
        member_id = request.member_id
        names = {p.name for p in request.protocols}
        if not group.supports_protocols(request.protocol_type, names):
            return respond(JoinResult(ErrorCode.INCONSISTENT_GROUP_PROTOCOL, member_id))
        if member_id in group.pending_members:
            if request.group_instance_id is not None:
                # Pending ids are handed only to dynamic members; Kafka treats this as impossible.
                return respond(JoinResult(ErrorCode.UNKNOWN_MEMBER_ID, member_id))
            return self._add_member_and_rebalance(group, request, member_id, now, respond)
        error = offsets.validate_member(group, member_id, request.group_instance_id)
        if error is not None:
            return respond(JoinResult(error, member_id))

        member = group.members[member_id]
        if group.is_(GroupState.PREPARING_REBALANCE):
            self._update_member_and_rebalance(group, member, request, now, respond)
        elif group.is_(GroupState.COMPLETING_REBALANCE):
            if member.matches(request.protocols):
                # Its JoinGroup response was lost: answer again, no new rebalance.
                respond(self._join_result(group, member, with_members=group.is_leader(member_id)))
            else:
                self._update_member_and_rebalance(group, member, request, now, respond)
        elif group.is_(GroupState.STABLE):
            if group.is_leader(member_id) or not member.matches(request.protocols):
                # A leader's rejoin forces a rebalance: it may have seen metadata change.
                self._update_member_and_rebalance(group, member, request, now, respond)
            else:
                respond(self._join_result(group, member, with_members=False))
        else:
            respond(JoinResult(ErrorCode.UNKNOWN_MEMBER_ID, member_id))
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
        self, group: Group, request: JoinRequest, member_id: str, now: int, respond: JoinCallback
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
        group.add(member, respond)
        self._deadlines.cancel(("pending", group.group_id, member_id))
        self._schedule_heartbeat(group, member, now, NEW_MEMBER_JOIN_TIMEOUT_MS)
        self._maybe_prepare_rebalance(group, now)

    def _update_member_and_rebalance(
        self, group: Group, member: Member, request: JoinRequest, now: int, respond: JoinCallback
    ) -> None:
        group.update_member(
            member, request.protocols, request.rebalance_timeout_ms, request.session_timeout_ms, respond
        )
        self._maybe_prepare_rebalance(group, now)

    def _replace_static_member(
        self,
        group: Group,
        request: JoinRequest,
        old_id: str,
        new_id: str,
        now: int,
        respond: JoinCallback,
    ) -> None:
        """KIP-345: a static member restarted with an unknown member id takes over its old entry."""
        old_leader = group.leader_id or ""
        assert request.group_instance_id is not None
        member = group.replace_static_member(request.group_instance_id, old_id, new_id)
        self._deadlines.cancel(("session", group.group_id, old_id))
        self._schedule_heartbeat(group, member, now)
        group.update_member(
            member, request.protocols, request.rebalance_timeout_ms, request.session_timeout_ms, respond
        )
        if group.is_(GroupState.STABLE):
            if group.select_protocol() != group.protocol_name:
                self._maybe_prepare_rebalance(group, now)
                return
            # The group keeps its generation under the new member id: Kafka persists that.
            self._records.append(records.group_record(group))
            if request.supports_skip_assignment:
                # v9+: the leader learns it leads but skips the assignor; the group stays Stable.
                is_leader = group.is_leader(new_id)
                result = self._join_result(group, member, with_members=is_leader)
                group.invoke_join(member, result._replace(skip_assignment=is_leader))
            else:
                # Older clients get the old leader id, so a restarted leader does not
                # compute an assignment a Stable group would not hand out.
                group.invoke_join(
                    member, self._join_result(group, member, with_members=False, leader=old_leader)
                )
        elif group.is_(GroupState.COMPLETING_REBALANCE):
            # The leader may already be assigning to the old member id.
            self._prepare_rebalance(group, now)

    # --- rebalance -----------------------------------------------------------------------

    def _maybe_prepare_rebalance(self, group: Group, now: int) -> None:
        if group.can_rebalance:
            self._prepare_rebalance(group, now)

    def _prepare_rebalance(self, group: Group, now: int) -> None:
        if group.is_(GroupState.COMPLETING_REBALANCE):
            self._reset_and_propagate_assignment_error(group, ErrorCode.REBALANCE_IN_PROGRESS, now)
        group.pending_sync.clear()
        self._deadlines.cancel(("sync", group.group_id))
        if group.is_(GroupState.EMPTY):
            delay = self.config.initial_rebalance_delay_ms
            group.pending_join = PendingJoin(
                initial=True, delay_ms=delay, remaining_ms=max(group.rebalance_timeout_ms - delay, 0)
            )
            self._deadlines.schedule(("join", group.group_id), now + delay)
        else:
            group.pending_join = PendingJoin(initial=False)
            self._deadlines.schedule(("join", group.group_id), now + group.rebalance_timeout_ms)
        group.transition(GroupState.PREPARING_REBALANCE, now)
        self._try_complete_join(group, now)

    def _try_complete_join(self, group: Group, now: int) -> None:
        """The delayed join completes as soon as every known member has rejoined."""
        pending = group.pending_join
        if (
            group.is_(GroupState.PREPARING_REBALANCE)
            and pending is not None
            and not pending.initial
            and group.has_all_members_joined
        ):
            self._complete_join(group, now)

    def _on_join_deadline(self, group: Group, now: int) -> None:
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
            self._deadlines.schedule(("join", group.group_id), now + delay)
            return
        self._complete_join(group, now)

    def _complete_join(self, group: Group, now: int) -> None:
        group.pending_join = None
        self._deadlines.cancel(("join", group.group_id))
        # Dynamic members that did not rejoin in time are dropped; static ones keep their place.
        for member in list(group.members.values()):
            if member.awaiting_join is None and not member.is_static:
                group.remove(member.member_id)
                self._cancel_member_timers(group, member.member_id)

        if not group.elect_joined_leader() and group.members:
            # Only static members that did not rejoin remain: wait another rebalance
            # timeout, until their sessions expire.
            group.pending_join = PendingJoin(initial=False)
            self._deadlines.schedule(("join", group.group_id), now + group.rebalance_timeout_ms)
            return

        group.init_next_generation(now)
        if group.is_(GroupState.EMPTY):
            self._records.append(records.group_record(group))
            return
        for member in group.members.values():
            result = self._join_result(group, member, with_members=group.is_leader(member.member_id))
            group.invoke_join(member, result)
            self._schedule_heartbeat(group, member, now)
            member.is_new = False
            group.pending_sync.add(member.member_id)
        self._deadlines.schedule(("sync", group.group_id), now + group.rebalance_timeout_ms)

    def _on_sync_deadline(self, group: Group, now: int) -> None:
        """Members that never sent SyncGroup for this generation are removed, and the group rebalances."""
        if not group.is_(GroupState.COMPLETING_REBALANCE, GroupState.STABLE) or not group.pending_sync:
            return
        for member_id in list(group.pending_sync):
            group.remove(member_id)
            self._cancel_member_timers(group, member_id)
        self._prepare_rebalance(group, now)

    def _reset_and_propagate_assignment_error(self, group: Group, error: ErrorCode, now: int) -> None:
        for member in group.members.values():
            member.assignment = b""
        self._propagate_assignment(group, error, now)

    def _propagate_assignment(self, group: Group, error: ErrorCode, now: int) -> None:
        ok = error == ErrorCode.NONE
        for member in group.members.values():
            result = SyncResult(
                error,
                group.protocol_type if ok else None,
                group.protocol_name if ok else None,
                member.assignment,
            )
            if group.invoke_sync(member, result):
                # Its session may have lapsed while it waited for the leader.
                self._schedule_heartbeat(group, member, now)

    # --- SyncGroup -----------------------------------------------------------------------

    def sync_group(self, request: SyncRequest, now: int, respond: SyncCallback) -> None:
        self._sync_group(request, now, respond)
        self.tick(now)

    def _sync_group(self, request: SyncRequest, now: int, respond: SyncCallback) -> None:
        if not request.group_id:
            return respond(SyncResult(ErrorCode.INVALID_GROUP_ID))
        group = self._groups.get(request.group_id)
        if group is None:
            return respond(SyncResult(ErrorCode.UNKNOWN_MEMBER_ID))
        error = offsets.validate_member(group, request.member_id, request.group_instance_id)
        if error is None and request.generation_id != group.generation_id:
            error = ErrorCode.ILLEGAL_GENERATION
        if error is None and not _claims_match(request, group):
            error = ErrorCode.INCONSISTENT_GROUP_PROTOCOL
        if error is not None:
            return respond(SyncResult(error))

        member = group.members[request.member_id]
        if group.is_(GroupState.EMPTY):
            respond(SyncResult(ErrorCode.UNKNOWN_MEMBER_ID))
        elif group.is_(GroupState.PREPARING_REBALANCE):
            respond(SyncResult(ErrorCode.REBALANCE_IN_PROGRESS))
        elif group.is_(GroupState.COMPLETING_REBALANCE):
            member.awaiting_sync = respond
            self._synced(group, request.member_id)
            if group.is_leader(request.member_id):
                for member_id, each in group.members.items():
                    each.assignment = request.assignments.get(member_id, b"")
                self._propagate_assignment(group, ErrorCode.NONE, now)
                group.transition(GroupState.STABLE, now)
                self._records.append(records.group_record(group))
        else:  # Stable: a retry, or a follower that joined late; it gets what the leader assigned
            self._synced(group, request.member_id)
            respond(SyncResult(ErrorCode.NONE, group.protocol_type, group.protocol_name, member.assignment))
            self._schedule_heartbeat(group, member, now)
        return None

    def _synced(self, group: Group, member_id: str) -> None:
        group.pending_sync.discard(member_id)
        if not group.pending_sync:
            self._deadlines.cancel(("sync", group.group_id))

    # --- Heartbeat -----------------------------------------------------------------------

    def heartbeat(self, request: HeartbeatRequest, now: int) -> ErrorCode:
        error = self._heartbeat(request, now)
        self.tick(now)
        return error

    def _heartbeat(self, request: HeartbeatRequest, now: int) -> ErrorCode:
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
        self._schedule_heartbeat(group, group.members[request.member_id], now)
        if group.is_(GroupState.PREPARING_REBALANCE):
            return ErrorCode.REBALANCE_IN_PROGRESS
        return ErrorCode.NONE

    def _on_session_expired(self, group: Group, member_id: str, now: int) -> None:
        member = group.members.get(member_id)
        if member is None:
            return
        waiting = member.awaiting_join is not None or member.awaiting_sync is not None
        if member.is_new or not waiting:
            self._remove_member_and_update_group(group, member, now)
        # A member waiting on a rebalance is alive; its session restarts when it is answered.

    def _on_pending_member_expired(self, group: Group, member_id: str, now: int) -> None:
        if member_id in group.pending_members:
            group.pending_members.discard(member_id)
            self._try_complete_join(group, now)

    def _remove_member_and_update_group(self, group: Group, member: Member, now: int) -> None:
        # A new member may still wait on its JoinGroup: tell it to start over.
        group.invoke_join(member, JoinResult(ErrorCode.UNKNOWN_MEMBER_ID, UNKNOWN_MEMBER_ID))
        group.remove(member.member_id)
        self._cancel_member_timers(group, member.member_id)
        if group.is_(GroupState.STABLE, GroupState.COMPLETING_REBALANCE):
            self._maybe_prepare_rebalance(group, now)
        elif group.is_(GroupState.PREPARING_REBALANCE):
            self._try_complete_join(group, now)

    # --- LeaveGroup ----------------------------------------------------------------------

    def leave_group(self, group_id: str, leaving: Iterable[MemberIdentity], now: int) -> LeaveResult:
        result = self._leave_group(group_id, list(leaving), now)
        self.tick(now)
        return result

    def _leave_group(self, group_id: str, leaving: list[MemberIdentity], now: int) -> LeaveResult:
        if not group_id:
            return LeaveResult(ErrorCode.INVALID_GROUP_ID)
        group = self._groups.get(group_id)
        if group is None:
            return LeaveResult(ErrorCode.NONE, tuple((m, ErrorCode.UNKNOWN_MEMBER_ID) for m in leaving))
        return LeaveResult(ErrorCode.NONE, tuple((m, self._leave_one(group, m, now)) for m in leaving))

    def _leave_one(self, group: Group, identity: MemberIdentity, now: int) -> ErrorCode:
        if identity.member_id == UNKNOWN_MEMBER_ID:
            # Administrative removal of a static member by its instance id.
            current = None
            if identity.group_instance_id is not None:
                current = group.static_members.get(identity.group_instance_id)
            if current is None:
                return ErrorCode.UNKNOWN_MEMBER_ID
            self._remove_member_and_update_group(group, group.members[current], now)
            return ErrorCode.NONE
        if identity.member_id in group.pending_members:
            group.pending_members.discard(identity.member_id)
            self._deadlines.cancel(("pending", group.group_id, identity.member_id))
            self._try_complete_join(group, now)
            return ErrorCode.NONE
        error = offsets.validate_member(group, identity.member_id, identity.group_instance_id)
        if error is not None:
            return error
        self._remove_member_and_update_group(group, group.members[identity.member_id], now)
        return ErrorCode.NONE

    # --- offsets -------------------------------------------------------------------------

    def commit_offsets(self, request: CommitRequest, now: int) -> dict[TopicPartition, ErrorCode]:
        errors = self._commit_offsets(request, now)
        self.tick(now)
        return errors

    def _commit_offsets(self, request: CommitRequest, now: int) -> dict[TopicPartition, ErrorCode]:
        def all_fail(error: ErrorCode) -> dict[TopicPartition, ErrorCode]:
            return dict.fromkeys(request.offsets, error)

        group = self._groups.get(request.group_id)
        if group is None:
            if request.generation_id >= 0:
                return all_fail(ErrorCode.ILLEGAL_GENERATION)  # a member of a generation that is gone
            group = self._create_group(request.group_id, now)
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
            self._schedule_heartbeat(group, group.members[request.member_id], now)
        accepted, errors = offsets.accept(request.offsets, now, self.config.offset_metadata_max_bytes)
        offsets.store(group, accepted, self._records)
        for tp in accepted:  # written after any transactional offset pending for it
            self._transactional.supersede(group.group_id, tp)
        return errors

    def commit_transactional_offsets(
        self, request: TxnCommitRequest, now: int
    ) -> dict[TopicPartition, ErrorCode]:
        """TxnOffsetCommit, once the producer's transaction holds the group's offsets
        partition (the transaction coordinator checks that first). The offsets are
        written as the producer's transactional records and stay pending until
        `complete_transaction`."""
        errors = self._commit_transactional_offsets(request, now)
        self.tick(now)
        return errors

    def _commit_transactional_offsets(
        self, request: TxnCommitRequest, now: int
    ) -> dict[TopicPartition, ErrorCode]:
        def all_fail(error: ErrorCode) -> dict[TopicPartition, ErrorCode]:
            return dict.fromkeys(request.offsets, error)

        if not request.group_id:
            return all_fail(ErrorCode.INVALID_GROUP_ID)
        group = self._groups.get(request.group_id)
        if group is None:
            if request.generation_id >= 0:
                return all_fail(ErrorCode.ILLEGAL_GENERATION)
            group = self._create_group(request.group_id, now)
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
            self._records.append(
                records.offset_record(
                    group.group_id, tp, committed, request.producer_id, request.producer_epoch
                )
            )
        return errors

    def complete_transaction(self, producer_id: int, commit: bool, now: int) -> None:
        """The producer's transaction ended (its marker is in `__consumer_offsets`): its
        pending offsets become the groups' committed offsets, or are dropped on abort.
        Nothing new is written: replay applies the marker to the same records."""
        for group_id, visible in self._transactional.complete(producer_id, commit).items():
            group = self._groups.get(group_id)
            if group is not None:  # a deleted group's pending offsets went with it
                group.offsets.update(visible)
        self.tick(now)

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
    ) -> tuple[ErrorCode, dict[TopicPartition, ErrorCode]]:
        if not group_id:
            return ErrorCode.INVALID_GROUP_ID, {}
        group = self._groups.get(group_id)
        if group is None:
            return ErrorCode.GROUP_ID_NOT_FOUND, {}
        wanted = list(partitions)
        if group.is_(GroupState.EMPTY):
            deletable, errors = wanted, {}
        elif group.protocol_type == CONSUMER_PROTOCOL_TYPE:
            deletable = [tp for tp in wanted if not group.is_subscribed_to(tp.topic)]
            errors = {
                tp: ErrorCode.GROUP_SUBSCRIBED_TO_TOPIC for tp in wanted if group.is_subscribed_to(tp.topic)
            }
        else:
            return ErrorCode.NON_EMPTY_GROUP, {}
        self._remove_offsets(group, deletable)
        errors.update(dict.fromkeys(deletable, ErrorCode.NONE))
        self._maybe_bury(group, now)
        self._publish()
        return ErrorCode.NONE, errors

    def _remove_offsets(self, group: Group, partitions: Iterable[TopicPartition]) -> None:
        """Committed and pending offsets go; a partition with only pending ones gets
        its tombstone too (Kafka's replay drops pending offsets at a tombstone)."""
        wanted = list(partitions)
        dropped = self._transactional.discard(group.group_id, wanted)
        only_pending = [tp for tp in wanted if tp in dropped and tp not in group.offsets]
        offsets.remove(group, wanted, self._records)
        self._records.extend(records.offset_tombstone(group.group_id, tp) for tp in only_pending)

    def _maybe_bury(self, group: Group, now: int) -> None:
        # A group with transactions open stays: they may still commit offsets into it.
        if (
            group.is_(GroupState.EMPTY)
            and not group.offsets
            and not self._transactional.has_open_transactions(group.group_id)
        ):
            self._kill_group(group, now)

    def _expire_offsets(self, now: int) -> None:
        for group in list(self._groups.values()):
            retention = self.config.offsets_retention_ms
            pending = functools.partial(self._transactional.is_pending, group.group_id)
            offsets.remove(group, offsets.expired(group, now, retention, pending), self._records)
            self._maybe_bury(group, now)
        if self._groups:
            self._deadlines.schedule(("retention",), now + self.config.offsets_retention_check_interval_ms)

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

    def delete_groups(self, group_ids: Iterable[str], now: int) -> dict[str, ErrorCode]:
        results: dict[str, ErrorCode] = {}
        for group_id in group_ids:
            group = self._groups.get(group_id)
            if group is None:
                results[group_id] = ErrorCode.GROUP_ID_NOT_FOUND
            elif not group.is_(GroupState.EMPTY):
                results[group_id] = ErrorCode.NON_EMPTY_GROUP
            else:
                self._kill_group(group, now)  # its offsets go with it
                results[group_id] = ErrorCode.NONE
        self._publish()
        return results


def _claims_match(request: SyncRequest, group: Group) -> bool:
    """SyncGroup v5+ name the protocol they think the group uses; it must be the group's."""
    if request.protocol_type is not None and request.protocol_type != group.protocol_type:
        return False
    return request.protocol_name is None or request.protocol_name == group.protocol_name
