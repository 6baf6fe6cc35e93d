"""Classic members inside a consumer group, and the online migration between the protocols
(KIP-848, as Kafka 4's GroupMetadataManager does it). Pure and clock-free, like its base.

A classic member (JoinGroup / SyncGroup / Heartbeat / LeaveGroup) is a consumer-group member
whose assignment the broker computes; its generation id is its member epoch.

| event                                  | action                                              |
|----------------------------------------|-----------------------------------------------------|
| JoinGroup, unknown dynamic member, v4+ | MEMBER_ID_REQUIRED with a new id (nothing stored)   |
| JoinGroup                              | subscription and owned partitions from its first    |
|                                        | protocol's metadata; upsert, bump the group epoch   |
|                                        | if its topics changed, reconcile; answered at once: |
|                                        | generation = member epoch, no leader; it must       |
|                                        | SyncGroup within its rebalance timeout              |
| SyncGroup, epoch behind the group's    | REBALANCE_IN_PROGRESS (unless it is revoking), and  |
| (not revoking)                         | it must rejoin within its rebalance timeout         |
| SyncGroup                              | its current assignment, in its protocol's version   |
| Heartbeat                              | REBALANCE_IN_PROGRESS while its epoch is behind the |
|                                        | group's, it has partitions to revoke, or the        |
|                                        | partitions it waits for are free; else NONE         |
| LeaveGroup, session / join / sync      | removed, group epoch bumped                         |
| deadline                               |                                                     |

Revocation works by rejoining: a member that must give up partitions gets, at its
SyncGroup, only those it keeps (epoch unchanged, UNREVOKED_PARTITIONS); its next heartbeat
answers REBALANCE_IN_PROGRESS and its next JoinGroup, owning none of them (eager clients
rejoin owning nothing), moves it to the new epoch.

Conversions (migration.py): a ConsumerGroupHeartbeat joining a classic group with members
upgrades it when the policy allows, it uses the consumer protocol and has no more members
than group.consumer.max.size (and the join itself is accepted); when the last
consumer-protocol member leaves or is fenced and the policy allows, the group (if it fits
group.max.size) becomes classic again.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Hashable, Iterable
from dataclasses import replace

from kafka_shim.protocol import consumer_protocol
from kafka_shim.protocol.consumer_protocol import CONSUMER_PROTOCOL_TYPE
from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.protocol.offsets_records import OffsetsRecord
from kafka_shim.protocol.types import ProtocolError
from kafka_shim.shim.coordinator.consumer import records
from kafka_shim.shim.coordinator.consumer.config import ConsumerGroupConfig
from kafka_shim.shim.coordinator.consumer.coordinator import (
    ConsumerGroupCoordinator,
    Refused,
    _validate,
    random_member_id,
)
from kafka_shim.shim.coordinator.consumer.group import ConsumerGroup
from kafka_shim.shim.coordinator.consumer.member import ClassicMetadata, ConsumerMember, MemberState
from kafka_shim.shim.coordinator.consumer.migration import (
    NotConvertible,
    by_id,
    creation_records,
    encode_assignment,
    from_classic,
    may_upgrade,
    to_classic,
)
from kafka_shim.shim.coordinator.consumer.types import HeartbeatRequest as ConsumerHeartbeat
from kafka_shim.shim.coordinator.consumer.types import HeartbeatResponse, Output, Topics
from kafka_shim.shim.coordinator.outcome import Outcome
from kafka_shim.shim.coordinator.types import (
    UNKNOWN_MEMBER_ID,
    GroupSnapshot,
    HeartbeatRequest,
    JoinRequest,
    JoinResult,
    LeaveResult,
    MemberIdentity,
    SyncRequest,
    SyncResult,
)

# Timer keys beside the base's: a classic member must rejoin, or sync, within its rebalance timeout.
JOIN, SYNC = "classic-join", "classic-sync"


class MigratingCoordinator(ConsumerGroupCoordinator):
    """The consumer-group coordinator with classic members and online migration."""

    def __init__(
        self, config: ConsumerGroupConfig | None = None, new_member_id: Callable[[], str] = random_member_id
    ) -> None:
        super().__init__(config, new_member_id)
        self._must_rejoin: set[tuple[str, str]] = set()  # (group, member) with a join deadline

    def reload(self, group_ids: Collection[str], log: Iterable[OffsetsRecord]) -> None:
        super().reload(group_ids, log)
        # A join deadline the unwritten call asked for was never set: the next heartbeat asks again.
        self._must_rejoin = {(g, m) for g, m in self._must_rejoin if g not in group_ids}

    # --- upgrade -------------------------------------------------------------------------

    def upgrade(
        self, snapshot: GroupSnapshot, request: ConsumerHeartbeat, topics: Topics, now: int
    ) -> Outcome[HeartbeatResponse]:
        """A member joins (epoch 0) a classic group that has members: Kafka's
        convertToConsumerGroup and the join in one step, so a join that is refused converts
        nothing (Kafka discards both together). The group was taken over if it exists here
        afterwards; the caller then releases the classic group."""
        try:
            _validate(request, self.config)
        except Refused as refused:
            return Outcome(HeartbeatResponse(refused.error, refused.message))
        not_found = HeartbeatResponse(
            ErrorCode.GROUP_ID_NOT_FOUND, f"Group {snapshot.group_id} is not a consumer group."
        )
        if not may_upgrade(snapshot, self.config.max_size, self.config.upgrade_enabled):
            return Outcome(not_found)
        try:
            group = from_classic(snapshot, topics)
        except NotConvertible:
            return Outcome(not_found)
        created = creation_records(group)
        sessions = [self._session_timer(group.group_id, m, now) for m in group.members.values()]
        self._groups[group.group_id] = group
        joined = self.heartbeat(request, topics, now)
        if joined.response.error != ErrorCode.NONE:  # full, say: it stays classic
            del self._groups[group.group_id]
            return Outcome(joined.response)
        return joined._replace(records=(*created, *joined.records), timers=(*sessions, *joined.timers))

    # --- downgrade -----------------------------------------------------------------------

    def _fence(self, group: ConsumerGroup, member_id: str, topics: Topics, now: int, out: Output) -> None:
        self._fence_all(group, [member_id], topics, now, out)

    def _fence_all(
        self, group: ConsumerGroup, member_ids: list[str], topics: Topics, now: int, out: Output
    ) -> None:
        """Remove members, or (Kafka's validateOnlineDowngradeWithFencedMembers) turn the group
        classic without them if only classic members would remain: then the group epoch does not
        move, so the classic generation is the one the remaining members are at."""
        remaining = [m for m in group.members.values() if m.member_id not in member_ids]
        if (
            remaining
            and all(m.classic is not None for m in remaining)
            and self.config.downgrade_enabled
            and len(remaining) <= self.config.classic_max_size
        ):
            self._downgrade(group, member_ids, topics, out)
            return
        for member_id in member_ids:
            self._fence_only(group, member_id, topics, now, out)

    def _fence_only(
        self, group: ConsumerGroup, member_id: str, topics: Topics, now: int, out: Output
    ) -> None:
        super()._fence(group, member_id, topics, now, out)
        self._must_rejoin.discard((group.group_id, member_id))
        out.timers += [
            ((JOIN, group.group_id, member_id), None),
            ((SYNC, group.group_id, member_id), None),
        ]

    def _downgrade(self, group: ConsumerGroup, leaving: list[str], topics: Topics, out: Output) -> None:
        """Kafka's convertToClassicGroup: every record of the group goes, the classic
        coordinator takes the remaining members."""
        out.records += records.group_tombstones(group)
        for member_id in group.members:
            self._must_rejoin.discard((group.group_id, member_id))
            for kind_ in ("session", "revocation", JOIN, SYNC):
                out.timers.append(((kind_, group.group_id, member_id), None))
        for member_id in leaving:
            group.remove_member(member_id)
        out.downgraded = to_classic(group, topics)
        del self._groups[group.group_id]

    def on_timer(self, key: Hashable, topics: Topics, now: int) -> Outcome[None]:
        assert isinstance(key, tuple)
        kind_, group_id, member_id = key
        if kind_ not in (JOIN, SYNC):
            return super().on_timer(key, topics, now)
        out = Output()
        group = self._groups.get(group_id)
        if group is not None and member_id in group.members:
            self._fence(group, member_id, topics, now, out)  # it did not rejoin / sync in time
        return out.result(None)

    # --- JoinGroup -----------------------------------------------------------------------

    def classic_join(self, request: JoinRequest, topics: Topics, now: int) -> Outcome[JoinResult]:
        """A classic JoinGroup for a consumer group with members."""
        out = Output()
        try:
            result = self._join(self._groups[request.group_id], request, topics, now, out)
        except Refused as refused:
            return Outcome(JoinResult(refused.error, request.member_id))
        return out.result(result)

    def _join(
        self, group: ConsumerGroup, request: JoinRequest, topics: Topics, now: int, out: Output
    ) -> JoinResult:
        member_id = request.member_id
        if len(group.members) >= self.config.max_size and member_id not in group.members:
            raise Refused(ErrorCode.GROUP_MAX_SIZE_REACHED, "The consumer group is full.")
        if not _supports(group, request):
            raise Refused(ErrorCode.INCONSISTENT_GROUP_PROTOCOL, "Unsupported protocol type or protocols.")
        try:
            subscription = consumer_protocol.decode_subscription(request.protocols[0].metadata)
        except ProtocolError as exc:
            raise Refused(ErrorCode.INCONSISTENT_GROUP_PROTOCOL, str(exc)) from exc
        if member_id == UNKNOWN_MEMBER_ID:
            member_id = self._new_member_id()
            if request.group_instance_id is None and request.require_known_member_id:
                return JoinResult(ErrorCode.MEMBER_ID_REQUIRED, member_id)
        # The static member holding this instance id under another member id, if any.
        holder = None if request.group_instance_id is None else group.static_member(request.group_instance_id)
        if holder is not None and holder.member_id == member_id:
            holder = None
        if holder is not None and request.member_id != UNKNOWN_MEMBER_ID:
            raise Refused(ErrorCode.FENCED_INSTANCE_ID, "Fenced by another member.")
        member = group.members.get(member_id) or ConsumerMember(member_id)
        if member.member_id in group.members and member.classic is None:
            raise Refused(ErrorCode.UNKNOWN_MEMBER_ID, "The member uses the consumer protocol.")
        # Nothing is refused from here on: a static member back with a new id replaces its
        # old self, which leaves.
        if holder is not None:
            self._fence_only(group, holder.member_id, topics, now, out)
        updated = replace(
            member,
            instance_id=request.group_instance_id,
            rack_id=subscription.rack_id,
            client_id=request.client_id,
            client_host=request.client_host,
            subscribed_topic_names=subscription.topics,
            subscribed_topic_regex=None,
            rebalance_timeout_ms=request.rebalance_timeout_ms,
            server_assignor=None,
            classic=ClassicMetadata(request.session_timeout_ms, request.protocols),
        )
        new_member = member_id not in group.members
        owned = by_id(subscription.owned, topics)
        joined = self._upsert(group, member, updated, owned, topics, now, out, bump=new_member)
        self._must_rejoin.discard((group.group_id, member_id))
        out.timers += [
            ((JOIN, group.group_id, member_id), None),
            (("session", group.group_id, member_id), now + request.session_timeout_ms),
            ((SYNC, group.group_id, member_id), now + max(request.rebalance_timeout_ms, 0)),
        ]
        return JoinResult(
            ErrorCode.NONE,
            member_id,
            generation_id=joined.member_epoch,
            protocol_type=CONSUMER_PROTOCOL_TYPE,
            protocol_name=request.protocols[0].name,
        )

    # --- SyncGroup, Heartbeat ------------------------------------------------------------

    def classic_sync(self, request: SyncRequest, topics: Topics, now: int) -> Outcome[SyncResult]:
        out = Output()
        try:
            group, member = self._classic_member(
                request.group_id, request.member_id, request.group_instance_id
            )
            if request.generation_id != member.member_epoch:
                raise Refused(ErrorCode.ILLEGAL_GENERATION, "Stale generation.")
            assert member.classic is not None
            names = {p.name for p in member.classic.protocols}
            if (request.protocol_type not in (None, CONSUMER_PROTOCOL_TYPE)) or (
                request.protocol_name is not None and request.protocol_name not in names
            ):
                raise Refused(ErrorCode.INCONSISTENT_GROUP_PROTOCOL, "Unknown protocol.")
            if group.group_epoch > member.member_epoch and member.state != MemberState.UNREVOKED_PARTITIONS:
                self._ask_to_rejoin(group, member, now, out)
                raise Refused(ErrorCode.REBALANCE_IN_PROGRESS, "The group is rebalancing.")
        except Refused as refused:
            return out.result(SyncResult(refused.error))
        out.timers += [
            ((SYNC, group.group_id, member.member_id), None),
            self._session_timer(group.group_id, member, now),
        ]
        assignment = encode_assignment(member.assigned, member.classic.protocols, topics)
        return out.result(
            SyncResult(ErrorCode.NONE, request.protocol_type, request.protocol_name, assignment)
        )

    def classic_heartbeat(self, request: HeartbeatRequest, now: int) -> Outcome[ErrorCode]:
        out = Output()
        try:
            group, member = self._classic_member(
                request.group_id, request.member_id, request.group_instance_id
            )
        except Refused as refused:
            return Outcome(refused.error)
        if request.generation_id != member.member_epoch:
            return Outcome(ErrorCode.ILLEGAL_GENERATION)
        out.timers.append(self._session_timer(group.group_id, member, now))
        if (
            member.member_epoch < group.group_epoch
            or member.state == MemberState.UNREVOKED_PARTITIONS
            or (member.state == MemberState.UNRELEASED_PARTITIONS and not _waits_on_others(group, member))
        ):
            self._ask_to_rejoin(group, member, now, out)
            return out.result(ErrorCode.REBALANCE_IN_PROGRESS)
        return out.result(ErrorCode.NONE)

    def _ask_to_rejoin(self, group: ConsumerGroup, member: ConsumerMember, now: int, out: Output) -> None:
        if (group.group_id, member.member_id) not in self._must_rejoin:
            self._must_rejoin.add((group.group_id, member.member_id))
            out.timers.append(
                ((JOIN, group.group_id, member.member_id), now + max(member.rebalance_timeout_ms, 0))
            )

    def _classic_member(
        self, group_id: str, member_id: str, instance_id: str | None
    ) -> tuple[ConsumerGroup, ConsumerMember]:
        group = self._groups.get(group_id)
        if group is None:  # it became classic meanwhile
            raise Refused(ErrorCode.UNKNOWN_MEMBER_ID, "Not a consumer group.")
        member = group.members.get(member_id)
        if instance_id is not None:
            holder = group.static_member(instance_id)
            if holder is None:
                raise Refused(ErrorCode.UNKNOWN_MEMBER_ID, "Unknown instance id.")
            if holder.member_id != member_id:
                raise Refused(ErrorCode.FENCED_INSTANCE_ID, "Fenced by another member.")
        if member is None or member.classic is None:
            raise Refused(ErrorCode.UNKNOWN_MEMBER_ID, "Not a classic member of the group.")
        return group, member

    # --- LeaveGroup ----------------------------------------------------------------------

    def classic_leave(
        self, group_id: str, leaving: Iterable[MemberIdentity], topics: Topics, now: int
    ) -> Outcome[LeaveResult]:
        out = Output()
        group = self._groups[group_id]
        answers = []
        fenced: list[str] = []
        for identity in leaving:
            try:
                member_id = identity.member_id
                if not member_id and identity.group_instance_id is not None:
                    holder = group.static_member(identity.group_instance_id)
                    member_id = "" if holder is None else holder.member_id
                self._classic_member(group_id, member_id, identity.group_instance_id)
            except Refused as refused:
                answers.append((identity, refused.error))
                continue
            fenced.append(member_id)
            answers.append((identity, ErrorCode.NONE))
        if fenced:
            self._fence_all(group, fenced, topics, now, out)
        return out.result(LeaveResult(ErrorCode.NONE, tuple(answers)))


def _supports(group: ConsumerGroup, request: JoinRequest) -> bool:
    """Kafka's ConsumerGroup.supportsClassicProtocols: the consumer protocol type, and a
    protocol every classic member (if any) supports."""
    if request.protocol_type != CONSUMER_PROTOCOL_TYPE or not request.protocols:
        return False
    classic = [
        m.classic
        for m in group.members.values()
        if m.classic is not None and m.member_id != request.member_id
    ]
    names = {p.name for p in request.protocols}
    return not classic or any(all(name in {p.name for p in c.protocols} for c in classic) for name in names)


def _waits_on_others(group: ConsumerGroup, member: ConsumerMember) -> bool:
    """Kafka's waitingOnUnreleasedPartition: a partition of its target is still held elsewhere."""
    target = group.target_of(member.member_id)
    return any(
        group.owner_epoch(topic_id, p) is not None
        for topic_id, parts in target.items()
        for p in parts - member.assigned.get(topic_id, frozenset())
    )
