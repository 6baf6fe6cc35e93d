"""The classic group coordinator as a pure state machine (Kafka's group coordinator shard).

Nothing here reads a clock, sleeps or does I/O: every call takes `now` (ms) and returns one
`Outcome` (outcome.py): its answer, the records to append to `__consumer_offsets`, the
deadlines to set or cancel, and the replies to JoinGroup and SyncGroup requests waiting
elsewhere, each named by the `Waiter` its request brought. The group service carries it out,
as it does the KIP-848 coordinator's. When a deadline passes the service calls `on_timer`; a
deadline a call sets for its own `now` (a zero initial rebalance delay) fires within the
call, so it never waits for a timer. Deadlines are `GroupTimer`s (group_timers.py).

This class only wires its parts and routes to them, as Kafka's shard does to its managers:
  registry.py        the groups, the offsets parked by open transactions, undo snapshots
  join.py            JoinGroup                         } Kafka's GroupMetadataManager,
  membership.py      SyncGroup, Heartbeat, LeaveGroup, } classic groups
                     DescribeGroups, ListGroups        }
  rebalance.py       a rebalance, and members expiring }
  handover.py        KIP-848 online migration, the classic side
  offset_manager.py  offsets (Kafka's OffsetMetadataManager)
  replay.py          loading from the log, one replay per record type
It keeps what spans them: deleting a group (its offsets, then itself) and the periodic
retention check (Kafka's cleanupGroupMetadata).

The group's state changes only as the table `state.TRANSITIONS` says (state, event, action,
next state); the requests that leave it as it is answer as Kafka's do in each state.
Offsets committed inside a transaction (TxnOffsetCommit) wait in `TransactionalOffsets`
until `complete_transaction` is told how the producer's transaction ended; the marker in
`__consumer_offsets` that records it is written by the transaction's completion, not here.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Collection, Iterable
from typing import TypeVar

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.protocol.offsets_records import OffsetsRecord, OffsetValue
from kafka_shim.shim.coordinator import group_timers, records
from kafka_shim.shim.coordinator.config import CoordinatorConfig
from kafka_shim.shim.coordinator.group import Group
from kafka_shim.shim.coordinator.handover import ClassicHandover
from kafka_shim.shim.coordinator.join import ClassicJoin
from kafka_shim.shim.coordinator.membership import ClassicMembership
from kafka_shim.shim.coordinator.offset_manager import OffsetManager
from kafka_shim.shim.coordinator.outcome import Effects, Outcome, Waiter
from kafka_shim.shim.coordinator.rebalance import Rebalance
from kafka_shim.shim.coordinator.registry import GroupRegistry
from kafka_shim.shim.coordinator.replay import replay
from kafka_shim.shim.coordinator.state import Event, GroupState
from kafka_shim.shim.coordinator.types import (
    CommitRequest,
    FetchedOffset,
    GroupDescription,
    GroupListing,
    GroupSnapshot,
    GroupTimer,
    HeartbeatRequest,
    JoinRequest,
    LeaveResult,
    MemberIdentity,
    SyncRequest,
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
        self._registry = GroupRegistry(self.config)
        self._offsets = OffsetManager(self._registry, consumer_group_topics)
        self._rebalance = Rebalance(self.config)
        self._membership = ClassicMembership(self._registry, self._rebalance)
        self._join = ClassicJoin(self._registry, self._rebalance, new_member_id)
        self._handover = ClassicHandover(self._registry, self._rebalance)

    def load(self, log: Iterable[OffsetsRecord], now: int) -> Outcome[None]:
        """Rebuild groups from the offsets log, as a coordinator taking over a partition does;
        the periodic retention check starts, as Kafka's does when it loads the partition."""
        out = Effects()
        for group in replay(log, now, self._registry.transactional).values():
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
        if out.timers:  # most commits set none
            while (key := out.due(now)) is not None:
                assert isinstance(key, GroupTimer)
                self._fire(key, now, out)
        return out.outcome(response)

    def _fire(self, key: GroupTimer, now: int, out: Effects) -> None:
        if key.kind == "retention":
            self._expire_offsets(now, out)
            return
        group = self._registry.get(key.group_id)
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
        return self._registry.get(group_id)

    def _kill_group(self, group: Group, now: int, out: Effects) -> None:
        """Dead: gone from the registry at once, so later requests find no such group."""
        group.transition(Event.GROUP_DELETED, now)
        del self._registry.groups[group.group_id]
        self._offsets.delete_all(group, out)
        out.records.append(records.group_tombstone(group.group_id))
        group_timers.cancel_group(group, out)

    # --- online migration (KIP-848; handover.py) -----------------------------------------

    def snapshot_group(self, group_id: str) -> GroupSnapshot | None:
        """A group's members as they are (None if it has none), for a consumer group to take."""
        return self._handover.snapshot(group_id)

    def release_group(self, group_id: str, now: int) -> Outcome[None]:
        """Hand a group's members over to a consumer group (handover.py)."""
        out = self._registry.undoable((group_id,))
        self._handover.release(group_id, now, out)
        return out.outcome(None)

    def adopt_group(self, snapshot: GroupSnapshot, now: int) -> Outcome[None]:
        """A consumer group whose members all use the classic protocol becomes classic again
        (handover.py)."""
        out = self._registry.undoable((snapshot.group_id,))
        self._handover.adopt(snapshot, now, out)
        return self._settle(out, now, None)

    # --- JoinGroup (join.py) -------------------------------------------------------------

    def join_group(self, request: JoinRequest, now: int, waiter: Waiter) -> Outcome[None]:
        """The answer goes to `waiter` among the replies, of this call or a later one."""
        out = self._registry.undoable((request.group_id,))
        self._join.join(request, now, waiter, out)
        return self._settle(out, now, None)

    # --- SyncGroup, Heartbeat, LeaveGroup (membership.py) --------------------------------

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
        out = self._registry.undoable((request.group_id,), with_offsets=True)
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
        out = self._registry.undoable((group_id,), with_offsets=True)
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
        transactional = registry.transactional.copy()

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
        out = self._registry.undoable(group_ids, with_offsets=True)
        results: dict[str, ErrorCode] = {}
        for group_id in group_ids:
            group = self._registry.get(group_id)
            if group is None:
                results[group_id] = ErrorCode.GROUP_ID_NOT_FOUND
            elif not group.is_(GroupState.EMPTY):
                results[group_id] = ErrorCode.NON_EMPTY_GROUP
            else:
                self._kill_group(group, now, out)  # its offsets go with it
                results[group_id] = ErrorCode.NONE
        return out.outcome(results)
