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
import uuid
from collections.abc import Callable, Collection, Iterable
from typing import TypeVar

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.protocol.offsets_records import OffsetsRecord, OffsetValue
from kafka_shim.shim.coordinator import group_timers, offsets, records
from kafka_shim.shim.coordinator.config import CoordinatorConfig
from kafka_shim.shim.coordinator.group import Group
from kafka_shim.shim.coordinator.member import Member
from kafka_shim.shim.coordinator.membership import ClassicMembership
from kafka_shim.shim.coordinator.offset_manager import OffsetManager
from kafka_shim.shim.coordinator.outcome import Effects, Outcome, Waiter
from kafka_shim.shim.coordinator.rebalance import Rebalance, answer_join, answer_sync, join_result
from kafka_shim.shim.coordinator.registry import GroupRegistry
from kafka_shim.shim.coordinator.state import Event, GroupState
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
    MemberIdentity,
    MemberSnapshot,
    SyncRequest,
    SyncResult,
    TopicPartition,
    TxnCommitRequest,
)

T = TypeVar("T")


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
        self._registry = GroupRegistry(self.config)
        self._offsets = OffsetManager(self._registry, consumer_group_topics)
        self._rebalance = Rebalance(self.config)
        self._membership = ClassicMembership(self._registry, self._rebalance)

    def load(self, log: Iterable[OffsetsRecord], now: int) -> Outcome[None]:
        """Rebuild groups from the offsets log, as a coordinator taking over a partition does;
        the periodic retention check starts, as Kafka's does when it loads the partition."""
        out = Effects()
        for group in records.replay(log, now, self._registry.transactional).values():
            self._registry.groups[group.group_id] = group
            for member in group.members.values():  # each loaded member's session starts now
                group_timers.schedule_session(group, member, now, out)
        self._registry.schedule_retention(now, out)
        return out.outcome(None)

    # --- deadlines -----------------------------------------------------------------------

    def on_timer(self, key: GroupTimer, now: int) -> Outcome[None]:
        """A deadline this coordinator set has passed."""
        # Retention's pass keeps what it changes itself (it looks at every group).
        out = Effects() if key.kind == "retention" else self._registry.undoable((key.group_id,))
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
        group = self._registry.groups.get(key.group_id)
        if group is None:
            return
        if key.kind == "join":
            self._rebalance.on_join_deadline(group, now, out)
        elif key.kind == "sync":
            self._rebalance.on_sync_deadline(group, now, out)
        elif key.kind == "session":
            self._rebalance.on_session_expired(group, key.member_id, now, out)
        elif key.kind == "pending":
            self._rebalance.on_pending_member_expired(group, key.member_id, now, out)

    # --- groups --------------------------------------------------------------------------

    def group(self, group_id: str) -> Group | None:
        """The live group (read-only use: tests and descriptions)."""
        return self._registry.groups.get(group_id)

    def _kill_group(self, group: Group, now: int, out: Effects) -> None:
        """Dead: gone from the registry at once, so later requests find no such group."""
        group.transition(Event.GROUP_DELETED, now)
        del self._registry.groups[group.group_id]
        self._offsets.delete_all(group, out)
        out.records.append(records.group_tombstone(group.group_id))
        group_timers.cancel_group(group, out)

    # --- online migration (KIP-848) -------------------------------------------------------

    def snapshot_group(self, group_id: str) -> GroupSnapshot | None:
        """A group's members as they are (None if it has none), for a consumer group to take."""
        group = self._registry.groups.get(group_id)
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
        out = self._registry.undoable((group_id,))
        group = self._registry.groups[group_id]
        group_timers.cancel_group(group, out)
        for member_id in [*group.members, *group.pending_members]:
            member = group.members.get(member_id)
            if member is not None:
                answer_join(member, JoinResult(ErrorCode.REBALANCE_IN_PROGRESS, member_id), out)
                answer_sync(member, SyncResult(ErrorCode.REBALANCE_IN_PROGRESS), out)
            group.remove(member_id)
        group.pending_join = None
        group.restore_empty(group.generation_id, group.protocol_type, now)
        out.records.append(records.group_tombstone(group_id))
        return out.outcome(None)

    def adopt_group(self, snapshot: GroupSnapshot, now: int) -> Outcome[None]:
        """A consumer group whose members all use the classic protocol becomes classic again
        (Kafka's ClassicGroup.fromConsumerGroup): Stable at the consumer group's epoch with
        the members' assignments, then a rebalance, so the members rejoin as classic ones."""
        out = self._registry.undoable((snapshot.group_id,))
        group = self._registry.groups.get(snapshot.group_id) or self._registry.create(
            snapshot.group_id, now, out
        )
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
        return self._settle(out, now, None)

    # --- JoinGroup -----------------------------------------------------------------------

    def join_group(self, request: JoinRequest, now: int, waiter: Waiter) -> Outcome[None]:
        """The answer goes to `waiter` among the replies, of this call or a later one."""
        out = self._registry.undoable((request.group_id,))
        self._join_group(request, now, waiter, out)
        return self._settle(out, now, None)

    def _join_group(self, request: JoinRequest, now: int, waiter: Waiter, out: Effects) -> None:
        if not request.group_id:
            return out.reply(waiter, JoinResult(ErrorCode.INVALID_GROUP_ID, request.member_id))
        if not self.config.allows_session_timeout(request.session_timeout_ms):
            return out.reply(waiter, JoinResult(ErrorCode.INVALID_SESSION_TIMEOUT, request.member_id))
        is_unknown = request.member_id == UNKNOWN_MEMBER_ID
        group = self._registry.groups.get(request.group_id)
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
        answer_join(old, JoinResult(ErrorCode.FENCED_INSTANCE_ID, old_id), out)
        answer_sync(old, SyncResult(ErrorCode.FENCED_INSTANCE_ID), out)
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
                answer_join(member, result._replace(skip_assignment=is_leader), out)
            else:
                # Older clients get the old leader id, so a restarted leader does not
                # compute an assignment a Stable group would not hand out.
                answer_join(member, join_result(group, member, with_members=False, leader=old_leader), out)
        elif group.is_(GroupState.COMPLETING_REBALANCE):
            # The leader may already be assigning to the old member id.
            self._rebalance.prepare(group, Event.MEMBERS_CHANGED, now, out)

    # --- SyncGroup, Heartbeat, LeaveGroup (membership.py) ---------------------------------

    def sync_group(self, request: SyncRequest, now: int, waiter: Waiter) -> Outcome[None]:
        """The answer goes to `waiter` among the replies, of this call or a later one."""
        out = self._registry.undoable((request.group_id,))
        self._membership.sync(request, now, waiter, out)
        return self._settle(out, now, None)

    def heartbeat(self, request: HeartbeatRequest, now: int) -> Outcome[ErrorCode]:
        out = Effects()
        return self._settle(out, now, self._membership.heartbeat(request, now, out))

    def leave_group(self, group_id: str, leaving: Iterable[MemberIdentity], now: int) -> Outcome[LeaveResult]:
        out = self._registry.undoable((group_id,))
        return self._settle(out, now, self._membership.leave(group_id, list(leaving), now, out))

    # --- offsets (offset_manager.py) -----------------------------------------------------

    def commit_offsets(self, request: CommitRequest, now: int) -> Outcome[dict[TopicPartition, ErrorCode]]:
        out = Effects()
        return self._settle(out, now, self._offsets.commit(request, now, out))

    def commit_transactional_offsets(
        self, request: TxnCommitRequest, now: int
    ) -> Outcome[dict[TopicPartition, ErrorCode]]:
        """TxnOffsetCommit, once the producer's transaction holds the group's offsets
        partition (the transaction coordinator checks that first). The offsets are
        written as the producer's transactional records and stay pending until
        `complete_transaction`."""
        out = self._registry.undoable((request.group_id,))
        return self._settle(out, now, self._offsets.commit_transactional(request, now, out))

    def complete_transaction(self, producer_id: int, commit: bool, now: int) -> Outcome[None]:
        """The producer's transaction ended (its marker is in `__consumer_offsets`): its
        pending offsets become the groups' committed offsets, or are dropped on abort.
        Nothing new is written: replay applies the marker to the same records."""
        self._offsets.complete_transaction(producer_id, commit)
        return Outcome(None)

    def fetch_offsets(
        self, group_id: str, partitions: Iterable[TopicPartition] | None, require_stable: bool = False
    ) -> dict[TopicPartition, FetchedOffset]:
        """require_stable (OffsetFetch v7+): partitions with a transactional offset
        pending answer UNSTABLE_OFFSET_COMMIT; the client retries until it completes."""
        return self._offsets.fetch(group_id, partitions, require_stable)

    def delete_offsets(
        self, group_id: str, partitions: Iterable[TopicPartition], now: int
    ) -> Outcome[tuple[ErrorCode, dict[TopicPartition, ErrorCode]]]:
        error, deletable, errors = self._offsets.deletable(group_id, partitions)
        if error != ErrorCode.NONE:
            return Outcome((error, {}))
        group = self._registry.groups[group_id]
        out = self._registry.undoable((group_id,))
        self._offsets.delete(group, deletable, out)
        errors.update(dict.fromkeys(deletable, ErrorCode.NONE))
        # The group stays, Empty, until the next retention check removes it (Kafka's
        # OffsetMetadataManager.deleteOffsets writes only tombstones; its periodic
        # cleanupGroupMetadata deletes a group left Empty without offsets), except where the
        # emulated release's coordinator buries it at once (Kafka 3.9's).
        if deletable and self.config.offset_delete_removes_empty_group:
            self._maybe_bury(group, now, out)
        return out.outcome((ErrorCode.NONE, errors))

    def _maybe_bury(self, group: Group, now: int, out: Effects) -> None:
        # A group with transactions open stays: they may still commit offsets into it.
        if (
            group.is_(GroupState.EMPTY)
            and not group.offsets
            and not self._registry.transactional.has_open_transactions(group.group_id)
        ):
            self._kill_group(group, now, out)

    def _expire_offsets(self, now: int, out: Effects) -> None:
        """The periodic retention check (Kafka's cleanupGroupMetadata): expired offsets go, and
        so do the groups left Empty without any. Its undo keeps only the groups it changes:
        their offsets and state (a group buried goes back into the registry), not a copy of
        every group."""
        registry = self._registry
        changed: list[tuple[Group, dict[TopicPartition, OffsetValue], GroupState, int]] = []
        groups = dict(registry.groups)
        transactional = copy.deepcopy(registry.transactional)

        def undo() -> None:
            for group, kept, state, since in changed:
                group.offsets, group.state, group.state_since_ms = kept, state, since
            registry.groups.clear()
            registry.groups.update(groups)
            registry.transactional = transactional
            registry.retention_scheduled = True

        out.undo = undo
        registry.retention_scheduled = False
        for group in list(registry.groups.values()):
            expired = self._offsets.expired(group, now)
            if expired or (group.is_(GroupState.EMPTY) and not group.offsets):
                changed.append((group, dict(group.offsets), group.state, group.state_since_ms))
            self._offsets.remove_expired(group, expired, out)
            self._maybe_bury(group, now, out)
        registry.schedule_retention(now, out)

    # --- administration ------------------------------------------------------------------

    def describe_group(self, group_id: str) -> GroupDescription:
        return self._membership.describe(group_id)

    def list_groups(self, states: Collection[str] = (), types: Collection[str] = ()) -> list[GroupListing]:
        """Empty filters match everything; states match case-insensitively; every group is classic."""
        return self._membership.listing(states, types)

    def delete_groups(self, group_ids: Iterable[str], now: int) -> Outcome[dict[str, ErrorCode]]:
        group_ids = list(group_ids)
        out = self._registry.undoable(group_ids)
        results: dict[str, ErrorCode] = {}
        for group_id in group_ids:
            group = self._registry.groups.get(group_id)
            if group is None:
                results[group_id] = ErrorCode.GROUP_ID_NOT_FOUND
            elif not group.is_(GroupState.EMPTY):
                results[group_id] = ErrorCode.NON_EMPTY_GROUP
            else:
                self._kill_group(group, now, out)  # its offsets go with it
                results[group_id] = ErrorCode.NONE
        return out.outcome(results)
