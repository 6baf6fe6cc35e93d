"""GroupService: every group request goes here, and here only is the group's type looked up
to pick the coordinator that answers it (Kafka's GroupCoordinatorService routing to the
shard's classic, consumer or share group).

Classic groups have their coordinator (coordinator.GroupCoordinator); KIP-848 consumer groups
theirs (coordinator.consumer), their offsets kept in an empty classic entry of the same id, so
commits, fetches, retention and the offsets log are shared; groups move between the two online
(KIP-848's migration: `consumer_heartbeat` upgrades, `GroupEffects.apply` downgrades). Share
groups' membership is kept beside them (coordinator.share.manager), and their requests come here
too; the delivery state of their records is the share partitions' (shim.share.partitions)."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Collection, Hashable
from typing import Any, Protocol, TypeVar, cast

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.protocol.messages.consumer_group_heartbeat import JOIN_EPOCH
from kafka_shim.protocol.offsets_records import GroupKey, OffsetKey
from kafka_shim.protocol.share_state_records import SharePartitionKey
from kafka_shim.shim.config.broker_config import BrokerConfig
from kafka_shim.shim.coordinator.config import CoordinatorConfig
from kafka_shim.shim.coordinator.consumer import ConsumerGroupConfig, HeartbeatResponse
from kafka_shim.shim.coordinator.consumer import HeartbeatRequest as ConsumerHeartbeat
from kafka_shim.shim.coordinator.consumer.classic import MigratingCoordinator
from kafka_shim.shim.coordinator.consumer.types import GroupDescription
from kafka_shim.shim.coordinator.coordinator import GroupCoordinator
from kafka_shim.shim.coordinator.share.config import ShareGroupConfig
from kafka_shim.shim.coordinator.share.group import ShareGroup
from kafka_shim.shim.coordinator.share.manager import (
    ShareGroupManager,
    ShareHeartbeat,
    ShareHeartbeatAnswer,
    ShareSessionTimer,
)
from kafka_shim.shim.coordinator.state import GroupState
from kafka_shim.shim.coordinator.types import (
    CommitRequest,
    FetchedOffset,
    GroupListing,
    GroupTimer,
    HeartbeatRequest,
    JoinRequest,
    JoinResult,
    LeaveResult,
    MemberIdentity,
    SyncRequest,
    SyncResult,
    TopicPartition,
    TxnCommitRequest,
)
from kafka_shim.shim.groups.effects import COORDINATOR_RETRY_BACKOFF_MS, GroupEffects
from kafka_shim.shim.groups.journal import GroupJournal, GroupShape, group_shape
from kafka_shim.shim.groups.topics import StoreTopics
from kafka_shim.shim.share.partitions import ShareLockTimer, SharePartitions, state_written
from kafka_shim.storage.errors import StorageError
from kafka_shim.storage.offsets_log import OffsetsLog
from kafka_shim.storage.topics import TopicStore

T = TypeVar("T")


class Deferring(Protocol):
    """What a held JoinGroup or SyncGroup needs of its request (shim.context.RequestContext is
    one): its time, and a way to wait for an answer given later. Named here, not imported, so
    that the broker, which makes the service, and the request context do not import each other."""

    def now_ms(self) -> int: ...

    async def deferred(self, start: Callable[[Callable[[T], None]], None]) -> T: ...


class GroupService:
    def __init__(
        self,
        config: BrokerConfig,
        store: TopicStore,
        clock: Callable[[], int],
        share_config_of: Callable[[str], ShareGroupConfig],
        share_lock_expired: Callable[[ShareLockTimer, int], None],
        journal: GroupJournal,
        share_partitions: Callable[[], SharePartitions],
    ) -> None:
        self.topics = StoreTopics(store)
        self._store, self._clock = store, clock
        self._share_config_of = share_config_of
        # The share partitions in force (made anew when __share_group_state is deleted).
        self._share_partitions = share_partitions
        # A share partition's acquisition-lock deadline (kept with the groups' deadlines).
        self._share_lock_expired = share_lock_expired
        # Each group's history for the console: what arrived, what deadlines fired, its shape.
        self._journal = journal
        self.load(config)

    def load(self, config: BrokerConfig) -> None:
        """The group coordinators, replayed from __consumer_offsets, with new deadlines."""
        now = self._clock()
        self.classic = GroupCoordinator(
            CoordinatorConfig.from_broker(config), consumer_group_topics=self._consumer_group_topics
        )
        self.consumer = MigratingCoordinator(ConsumerGroupConfig.from_broker(config))
        self.offsets_log = OffsetsLog(self._store, config.offsets_topic_num_partitions)
        self.effects = GroupEffects(
            self.offsets_log, self._clock, self.classic.adopt_group, self._reload_groups
        )
        replayed = list(self.offsets_log.replay())
        apply = self.effects.apply
        apply(self.classic.load((r for r in replayed if isinstance(r.key, OffsetKey | GroupKey)), now))
        apply(self.consumer.load(replayed, now))
        self.share = ShareGroupManager(self._share_config_of)
        apply(self.share.load(replayed, now))

    def unload(self, config: BrokerConfig) -> None:
        """__consumer_offsets was deleted: the coordinators resign and load it anew (empty), and
        the joins and syncs they held are answered NOT_COORDINATOR."""
        effects = self.effects
        self.load(config)
        effects.unload()

    def set_deadline(self, key: Hashable, at: int | None) -> None:
        """Share partitions' lock deadlines, kept with the groups' (of the current load)."""
        self.effects.set_deadline(key, at)

    def group_type(self, group_id: str) -> str | None:
        """The type of the group with this id (Kafka's: classic, consumer, share), if any: one
        id names one group, whichever coordinator keeps it."""
        if self.share.group(group_id) is not None:
            return "share"
        if self.consumer.group(group_id) is not None:
            return "consumer"
        return "classic" if self.classic.group(group_id) is not None else None

    # The classic protocol's requests: a consumer group's classic members are served by its
    # coordinator (KIP-848's migration), every other group by the classic one.

    async def join(self, ctx: Deferring, join: JoinRequest) -> JoinResult:
        """JoinGroup: answered at once or when the group's rebalance completes."""
        group_id = join.group_id
        if self.share.group(group_id) is not None:
            return JoinResult(ErrorCode.GROUP_ID_NOT_FOUND, "")  # Kafka: "... is not a classic group."
        consumer_group = self.consumer.group(group_id)
        if consumer_group is not None and consumer_group.members:
            if not self.classic.config.allows_session_timeout(join.session_timeout_ms):
                return JoinResult(ErrorCode.INVALID_SESSION_TIMEOUT, join.member_id)
            return self.effects.apply_or(
                self.consumer.classic_join(join, self.topics, ctx.now_ms()),
                lambda code: JoinResult(code, join.member_id),
            )
        if consumer_group is not None:  # empty: it becomes classic, once its tombstones are written
            deleted = self.effects.apply_or(self.consumer.delete_empty(group_id), ErrorCode)
            if deleted != ErrorCode.NONE:
                return JoinResult(deleted, join.member_id)
        classic = self.classic
        return await ctx.deferred(
            lambda respond: self._start_waiting(
                lambda waiter: classic.join_group(join, ctx.now_ms(), waiter),
                respond,
                lambda code: JoinResult(code, join.member_id),
                (group_id, "JoinGroup", join.member_id),
            )
        )

    async def sync(self, ctx: Deferring, sync: SyncRequest) -> SyncResult:
        """SyncGroup: the member's assignment, at once or once the leader has sent them."""
        if self.consumer.group(sync.group_id) is not None:
            return self.effects.apply_or(
                self.consumer.classic_sync(sync, self.topics, ctx.now_ms()), SyncResult
            )
        classic = self.classic
        return await ctx.deferred(
            lambda respond: self._start_waiting(
                lambda waiter: classic.sync_group(sync, ctx.now_ms(), waiter),
                respond,
                SyncResult,
                (sync.group_id, "SyncGroup", sync.member_id),
            )
        )

    def _start_waiting(
        self,
        call: Any,
        respond: Callable[[Any], None],
        refuse: Callable[[ErrorCode], Any],
        arrival: tuple[str, str, str],
    ) -> None:
        self.effects.start_waiting(call, respond, refuse)
        group_id, api, member_id = arrival  # noted as it arrives, its answer maybe much later
        self._journal.arrived(group_id, api, member_id)
        self._journal.observe(self._clock(), group_id, self.shape(group_id))

    def shape(self, group_id: str) -> GroupShape | None:
        """The group's state, generation and members, as its journal notes them."""
        return group_shape(self.classic, self.consumer, self.share, group_id)

    def heartbeat(self, beat: HeartbeatRequest, now: int) -> ErrorCode:
        if self.consumer.group(beat.group_id) is not None:
            return self.effects.apply_or(self.consumer.classic_heartbeat(beat, now), ErrorCode)
        return self.effects.apply(self.classic.heartbeat(beat, now))

    def leave(self, group_id: str, leaving: list[MemberIdentity], now: int) -> LeaveResult:
        if self.consumer.group(group_id) is not None:  # classic members of a consumer group
            return self.effects.apply_or(
                self.consumer.classic_leave(group_id, leaving, self.topics, now), LeaveResult
            )
        return self.effects.apply_or(self.classic.leave_group(group_id, leaving, now), LeaveResult)

    # Offsets: every group type's are kept by the classic coordinator.

    def commit_offsets(
        self, commit: CommitRequest, api_version: int, now: int
    ) -> dict[TopicPartition, ErrorCode]:
        """OffsetCommit. A KIP-848 group's commits are fenced by member epoch
        (STALE_MEMBER_EPOCH, UNKNOWN_MEMBER_ID); its offsets are kept in an empty classic
        entry, committed as an admin tool would once the member epoch has been checked."""
        commits = commit.offsets
        if self.consumer.group(commit.group_id) is not None:
            error = self.consumer.validate_commit(
                commit.group_id, commit.member_id, commit.generation_id, api_version
            )
            if error is not None:
                return dict.fromkeys(commits, error)
            commit = CommitRequest(commit.group_id, commits)
        try:  # apply_or, spelled out: the busiest group request saves a frame and a closure
            return self.effects.apply(self.classic.commit_offsets(commit, now), now)
        except StorageError as exc:
            return dict.fromkeys(commits, exc.code)

    def commit_transactional_offsets(
        self, commit: TxnCommitRequest, now: int
    ) -> dict[TopicPartition, ErrorCode]:
        return self.effects.apply_or(
            self.classic.commit_transactional_offsets(commit, now),
            lambda code: dict.fromkeys(commit.offsets, code),
        )

    def delete_offsets(
        self, group_id: str, partitions: list[TopicPartition], now: int
    ) -> tuple[ErrorCode, dict[TopicPartition, ErrorCode]]:
        return self.effects.apply_or(
            self.classic.delete_offsets(group_id, partitions, now), lambda code: (code, {})
        )

    def transaction_completed(self, producer_id: int, commit: bool, now: int) -> None:
        """The producer's marker is in `__consumer_offsets`: its transactional offset commits
        become the groups' offsets, or are dropped (Kafka's onTransactionCompleted)."""
        self.effects.apply(self.classic.complete_transaction(producer_id, commit, now))

    def fetch_offsets(
        self, group_id: str, partitions: list[TopicPartition] | None, require_stable: bool
    ) -> dict[TopicPartition, FetchedOffset]:
        return self.classic.fetch_offsets(group_id, partitions, require_stable)

    def fetch_refusal(self, group_id: str, member_id: str | None, member_epoch: int) -> ErrorCode:
        """OffsetFetch v9+: members of a KIP-848 group name themselves, fenced by member epoch."""
        if self.consumer.group(group_id) is None:
            return ErrorCode.NONE
        return self.consumer.validate_fetch(group_id, member_id, member_epoch) or ErrorCode.NONE

    # Groups as a whole.

    def delete_groups(self, group_ids: list[str], now: int) -> dict[str, ErrorCode]:
        """DeleteGroups: a consumer or share group's answer is its own (without committed
        offsets it has no classic entry); then the classic entries of those deleted."""
        own: dict[str, ErrorCode] = {}
        for group_id in group_ids:
            if self.consumer.group(group_id) is not None:
                own[group_id] = self.effects.apply_or(self.consumer.delete_empty(group_id), ErrorCode)
            elif self.share.group(group_id) is not None:
                own[group_id] = self._delete_share_group(group_id, now)
        classic = [g for g in group_ids if own.get(g) in (None, ErrorCode.NONE)]
        results = (
            self.effects.apply_or(
                self.classic.delete_groups(classic, now), lambda code: dict.fromkeys(classic, code)
            )
            if classic
            else {}
        )
        results.update(own)
        return results

    def _delete_share_group(self, group_id: str, now: int) -> ErrorCode:
        """Its share state first, then the group, as Kafka 4.1/4.2's
        GroupCoordinatorService.deleteGroups (deleteShareGroups: the persister's deleteState; a
        group whose state was not deleted is answered the persister's error and left out of the
        group deletion): a state write that fails leaves the group, empty, to be deleted again."""
        refusal = self.share.delete_refusal(group_id)
        if refusal != ErrorCode.NONE:
            return refusal
        partitions = self._share_partitions()
        keys = [key for key, _ in partitions.of_group(group_id)]
        written = state_written(lambda: partitions.delete(keys, now))
        if written != ErrorCode.NONE:
            return written
        return self.effects.apply_or(self.share.delete(group_id), ErrorCode)

    # Share groups (KIP-932).

    def share_heartbeat(self, beat: ShareHeartbeat, now: int) -> ShareHeartbeatAnswer:
        """ShareGroupHeartbeat. A group id that names a classic or consumer group is
        GROUP_ID_NOT_FOUND ("not a share group"), as Kafka answers; the share group's records
        reach `__consumer_offsets` before the answer (NOT_COORDINATOR if they cannot, the group
        staying as the log has it)."""
        if self.group_type(beat.group_id) not in (None, "share"):
            return ShareHeartbeatAnswer(
                ErrorCode.GROUP_ID_NOT_FOUND, f"Group {beat.group_id} is not a share group."
            )
        return self.effects.apply_or(self.share.heartbeat(beat, self.topics, now), ShareHeartbeatAnswer)

    def share_group(self, group_id: str) -> ShareGroup | None:
        """The share group with this id (ShareGroupDescribe, the share offsets' APIs)."""
        return self.share.group(group_id)

    def reset_share_offset(self, key: SharePartitionKey, start_offset: int, now: int) -> ErrorCode:
        """AlterShareGroupOffsets of one share partition: it starts afresh at `start_offset`
        (NONE), or the share coordinator's error when that cannot be written (it stays)."""
        partitions = self._share_partitions()
        return state_written(lambda: partitions.reset(key, start_offset, now))

    def delete_share_offsets(self, group_id: str, topic_id: uuid.UUID, now: int) -> ErrorCode:
        """DeleteShareGroupOffsets of one topic: the group's state of its partitions goes (a
        tombstone each), or the share coordinator's error when that cannot be written."""
        partitions = self._share_partitions()
        keys = [key for key, _ in partitions.of_group(group_id) if key.topic_id == topic_id]
        return state_written(lambda: partitions.delete(keys, now))

    def list_groups(
        self, states_filter: Collection[str], types_filter: Collection[str]
    ) -> list[GroupListing]:
        """ListGroups: classic, then consumer, then share groups (v4+ filtered by state, v5+ by type)."""
        consumer_groups = {g.group_id: g for g in self.consumer.groups()}
        # A consumer group's offsets sit in an empty classic entry of the same id: not a group of its own.
        listings = [
            g
            for g in self.classic.list_groups(states_filter, types_filter)
            if g.group_id not in consumer_groups
        ]
        states = {s.lower() for s in states_filter}
        types = {t.lower() for t in types_filter}
        if not types or "consumer" in types:
            listings += [
                GroupListing(g.group_id, "consumer", g.state.value, "consumer")
                for g in consumer_groups.values()
                if not states or g.state.value.lower() in states
            ]
        if not types or "share" in types:
            listings += [
                GroupListing(g.group_id, "share", g.state.value, "share")
                for g in self.share.groups()
                if not states or g.state.value.lower() in states
            ]
        return listings

    def describe_classic(self, group_id: str) -> Any:
        """DescribeGroups: a classic group's description; None for a consumer or share group."""
        if self.group_type(group_id) in ("consumer", "share"):
            return None
        return self.classic.describe_group(group_id)

    def describe_consumer_group(self, group_id: str) -> GroupDescription:
        """ConsumerGroupDescribe: a classic group is GROUP_ID_NOT_FOUND here, as in Kafka."""
        if self.consumer.group(group_id) is None and self.classic.group(group_id) is not None:
            return GroupDescription(
                ErrorCode.GROUP_ID_NOT_FOUND, f"Group {group_id} is not a consumer group.", group_id
            )
        return self.consumer.describe(group_id, self.topics)

    def consumer_heartbeat(self, beat: ConsumerHeartbeat, now: int) -> HeartbeatResponse:
        """ConsumerGroupHeartbeat. A member joining (epoch 0) a classic group that has members
        upgrades it (KIP-848's online migration) when the policy and the group allow; any other
        heartbeat to a classic or share group is GROUP_ID_NOT_FOUND, as Kafka answers."""
        group_id = beat.group_id
        not_consumer = HeartbeatResponse(
            ErrorCode.GROUP_ID_NOT_FOUND, f"Group {group_id} is not a consumer group."
        )
        if self.share.group(group_id) is not None:
            return not_consumer
        classic = self.classic.group(group_id)
        if classic is not None and not classic.is_(GroupState.EMPTY):
            return self.upgrade(beat, now) if beat.member_epoch == JOIN_EPOCH else not_consumer
        return self.effects.apply_or(
            self.consumer.heartbeat(beat, self.topics, now), lambda code: HeartbeatResponse(code, None)
        )

    def upgrade(self, join: ConsumerHeartbeat, now: int) -> HeartbeatResponse:
        """A consumer-protocol member joins a classic group with members: the group becomes a
        consumer group with its classic members in it (KIP-848's online upgrade), or the
        member is told why not."""
        snapshot = self.classic.snapshot_group(join.group_id)
        assert snapshot is not None, f"{join.group_id} has no classic members"
        result = self.consumer.upgrade(snapshot, join, self.topics, now)
        try:
            if self.consumer.group(join.group_id) is not None:
                # Its tombstone goes first, as in Kafka; unwritten, the classic group stays.
                self.effects.apply(self.classic.release_group(join.group_id, now))
            return self.effects.apply(result)
        except StorageError as exc:
            self._reload_groups([join.group_id])
            return HeartbeatResponse(exc.code, None)

    # Deadlines.

    def deadline_passed(self, key: Hashable, now: int) -> None:
        """Fire one of the groups' deadlines, named in the group's journal as the cause of
        what follows. One whose records cannot be written (a full disk) fires again
        COORDINATOR_RETRY_BACKOFF_MS later."""
        group_id, kind, member_id = deadline_of(key)
        if group_id:
            self._journal.deadline(group_id, kind, member_id)
        try:
            self._fire(key, now)
        except StorageError:
            self.effects.deadlines.schedule(key, now + COORDINATOR_RETRY_BACKOFF_MS)
        if group_id:
            self._journal.observe(now, group_id, self.shape(group_id))

    def _fire(self, key: Hashable, now: int) -> None:
        apply = self.effects.apply
        if isinstance(key, ShareLockTimer):
            self._share_lock_expired(key, now)
        elif isinstance(key, ShareSessionTimer):
            # The member's share session (and what it holds) stays until the session ends or
            # its connection closes, as Kafka's; its locks expire otherwise.
            apply(self.share.on_timer(key, now))
        elif isinstance(key, GroupTimer):
            apply(self.classic.on_timer(key, now))
            if key.kind == "retention":
                # Kafka deletes a consumer group that has neither members nor offsets left.
                for group in list(self.consumer.groups()):
                    if not group.members and self.classic.group(group.group_id) is None:
                        apply(self.consumer.delete_empty(group.group_id))
        else:  # the KIP-848 coordinator's (kind, group id, member id)
            apply(self.consumer.on_timer(key, self.topics, now))

    def _reload_groups(self, group_ids: Collection[str]) -> None:
        """Consumer and share groups as `__consumer_offsets` has them (a write of theirs failed):
        their partitions of it replayed, as at start-up (coordinator.consumer.replayed)."""
        partitions = {self.offsets_log.partition_for(group_id) for group_id in group_ids}
        logged = list(self.offsets_log.replay(partitions))
        self.consumer.reload(group_ids, logged)
        self.share.reload(group_ids, logged)

    def _consumer_group_topics(self, group_id: str) -> frozenset[str] | None:
        group = self.consumer.group(group_id)
        return None if group is None else group.subscribed_topics()


def deadline_of(key: Hashable) -> tuple[str, str, str]:
    """(group id, kind, member id) of a group coordinator's deadline key ("" where it has none)."""
    if isinstance(key, ShareSessionTimer):
        return key.group_id, "session", key.member_id
    if isinstance(key, ShareLockTimer):
        return key.group_id, "record-lock", ""
    if isinstance(key, GroupTimer):
        return key.group_id, key.kind, key.member_id
    kind, group_id, member_id = cast(tuple[str, str, str], key)  # the KIP-848 coordinator's
    return group_id, kind, member_id
