"""The KIP-848 consumer-group coordinator: a pure state machine (Kafka's GroupMetadataManager
for consumer groups). Nothing here reads a clock or does I/O: every call takes `now` (ms) and
the topics as they are, and returns one `Outcome`: the answer, the records to append to
`__consumer_offsets` before answering, and the timers to set or cancel. A refused request
changes nothing and writes nothing.

Transitions (member epochs: 0 joins, -1 leaves, -2 a static member leaves for a while).
State, event -> action -> next state:

| member          | event                            | action                                | next          |
|-----------------|----------------------------------|---------------------------------------|---------------|
| none            | beat epoch 0                     | add; bump epoch; target; reconcile    | reconciling   |
| none            | beat epoch > 0                   | UNKNOWN_MEMBER_ID (GROUP_ID_NOT_FOUND | none          |
|                 |                                  | when the group does not exist)        |               |
| any             | beat epoch 0, same member id     | it owns nothing now: reset; reconcile | reconciling   |
| epoch E         | beat > E, or < E unless it is    | FENCED_MEMBER_EPOCH                   | unchanged     |
|                 | the previous epoch with owned    |                                       |               |
|                 | partitions within its assignment |                                       |               |
| epoch E         | beat E (or previous, as above)   | update subscription; bump group epoch | reconcile.py  |
|                 |                                  | if it or its topics changed; a new    |               |
|                 |                                  | target if the epoch moved; reconcile  |               |
| static, -2      | beat 0, same instance, new id    | takes over epoch 0 and the assignment | reconciling   |
| static, not -2  | beat 0, same instance, other id  | UNRELEASED_INSTANCE_ID                | unchanged     |
| static          | beat from another member id      | FENCED_INSTANCE_ID                    | unchanged     |
| any             | beat -1                          | remove; bump group epoch              | none          |
| static          | beat -2                          | keep it and its partitions at -2      | static, -2    |
| any             | session deadline                 | remove; bump group epoch              | none          |
| UNREVOKED       | revocation deadline (its         | remove; bump group epoch              | none          |
|                 | rebalance timeout)               |                                       |               |

The group's state follows from its data (group.ConsumerGroupState): Empty without
members, Assigning while the group epoch is ahead of the target assignment's, Reconciling
while a member has not reached it, else Stable. The target assignment is recomputed by the
heartbeat that first sees a group epoch ahead of it, as in Kafka.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Hashable, Iterable
from dataclasses import replace

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.protocol.messages.consumer_group_heartbeat import JOIN_EPOCH, LEAVE_EPOCH, STATIC_LEAVE_EPOCH
from kafka_shim.protocol.offsets_records import OffsetsRecord
from kafka_shim.shim.coordinator.consumer import records, subscriptions, target
from kafka_shim.shim.coordinator.consumer.config import ConsumerGroupConfig
from kafka_shim.shim.coordinator.consumer.group import ConsumerGroup, ConsumerGroupState
from kafka_shim.shim.coordinator.consumer.member import ConsumerMember, MemberState
from kafka_shim.shim.coordinator.consumer.reconcile import reconcile
from kafka_shim.shim.coordinator.consumer.replayed import ReplayedGroups
from kafka_shim.shim.coordinator.consumer.types import (
    Assignment,
    GroupDescription,
    HeartbeatRequest,
    HeartbeatResponse,
    MemberDescription,
    Output,
    Topics,
    is_subset,
    normalized,
)
from kafka_shim.shim.coordinator.outcome import Outcome


def random_member_id() -> str:
    return str(uuid.uuid4())


class Refused(Exception):
    """A request Kafka answers with an error; raised before anything changed."""

    def __init__(self, error: ErrorCode, message: str) -> None:
        super().__init__(message)
        self.error = error
        self.message = message


class ConsumerGroupCoordinator(ReplayedGroups[ConsumerGroup]):
    def __init__(
        self,
        config: ConsumerGroupConfig | None = None,
        new_member_id: Callable[[], str] = random_member_id,
    ) -> None:
        super().__init__()
        self.config = config or ConsumerGroupConfig()
        self._new_member_id = new_member_id

    def _replay(self, log: Iterable[OffsetsRecord]) -> dict[str, ConsumerGroup]:
        return records.replay(log)

    def _session_timers(self, group: ConsumerGroup, now: int) -> Iterable[tuple[Hashable, int]]:
        return (self._session_timer(group.group_id, m, now) for m in group.members.values())

    def session_timeout_of(self, member: ConsumerMember) -> int:
        """A classic member keeps the session timeout it joined with."""
        return self.config.session_timeout_ms if member.classic is None else member.classic.session_timeout_ms

    def _session_timer(self, group_id: str, member: ConsumerMember, now: int) -> tuple[Hashable, int]:
        """The member's heartbeat deadline, a session timeout from `now`."""
        return ("session", group_id, member.member_id), now + self.session_timeout_of(member)

    # --- ConsumerGroupHeartbeat ----------------------------------------------------------

    def heartbeat(self, request: HeartbeatRequest, topics: Topics, now: int) -> Outcome[HeartbeatResponse]:
        out = Output()
        try:
            _validate(request, self.config)
            if request.member_epoch in (LEAVE_EPOCH, STATIC_LEAVE_EPOCH):
                response = self._leave(request, topics, now, out)
            else:
                response = self._beat(request, topics, now, out)
        except Refused as refused:
            return Outcome(HeartbeatResponse(refused.error, refused.message))
        return out.result(response)

    def _beat(self, request: HeartbeatRequest, topics: Topics, now: int, out: Output) -> HeartbeatResponse:
        joining = request.member_epoch == JOIN_EPOCH
        group = self._groups.get(request.group_id)
        if group is None:
            if not joining:
                raise Refused(ErrorCode.GROUP_ID_NOT_FOUND, f"Consumer group {request.group_id} not found.")
            group = ConsumerGroup(request.group_id)
        member_id = request.member_id or self._new_member_id()  # v0 joins without one
        if len(group.members) >= self.config.max_size and member_id not in group.members:
            raise Refused(
                ErrorCode.GROUP_MAX_SIZE_REACHED,
                f"The consumer group has reached its maximum capacity of {self.config.max_size} members.",
            )
        member, replaced = self._member_for(group, request, member_id)

        updated = _updated(member, request)
        new_member = member_id not in group.members
        if replaced is not None:
            # The returning static member takes the old one's place under its new id.
            old_target = group.target_of(replaced.member_id)
            group.remove_member(replaced.member_id)
            out.records += records.member_tombstones(group.group_id, replaced.member_id)
            out.timers += [(("session", group.group_id, replaced.member_id), None)]
            group.target[member_id] = old_target
            out.records.append(records.target_member(group.group_id, member_id, old_target))
        reconciled = self._upsert(
            group, member, updated, request.owned, topics, now, out, bump=new_member and replaced is None
        )
        out.timers.append((("session", group.group_id, member_id), now + self.config.session_timeout_ms))
        self._groups[group.group_id] = group

        full = joining or (
            request.rebalance_timeout_ms != -1
            and (request.subscribed_topic_names is not None or request.subscribed_topic_regex is not None)
            and request.owned is not None
        )
        changed = normalized(reconciled.assigned) != normalized(member.assigned)
        return HeartbeatResponse(
            ErrorCode.NONE,
            member_id=member_id,
            member_epoch=reconciled.member_epoch,
            heartbeat_interval_ms=self._interval(group),
            assignment=reconciled.assigned if full or changed else None,
        )

    def _upsert(
        self,
        group: ConsumerGroup,
        member: ConsumerMember,
        updated: ConsumerMember,
        owned: Assignment | None,
        topics: Topics,
        now: int,
        out: Output,
        *,
        bump: bool,
    ) -> ConsumerMember:
        """Put the member as `updated` says (it was `member`), move the group epoch and the
        target assignment if its subscription or the topics changed, and reconcile it with
        what it says it `owned`; the member as it stands then."""
        member_id = updated.member_id
        new_member = member_id not in group.members
        if new_member or updated.subscription() != member.subscription():
            out.records.append(records.member_metadata(group.group_id, updated))
            # A regex moves the group epoch once resolved: at once if another member's made
            # it so, else when the resolution it asks for comes (Kafka's
            # maybeUpdateRegularExpressions); meanwhile the member has its topic names only.
            regex = updated.subscribed_topic_regex
            if updated.subscribed_topic_names != member.subscribed_topic_names or (
                regex != member.subscribed_topic_regex and regex in group.resolved_regexes
            ):
                bump = True
        group.put_member(updated)
        bump = target.refresh_subscriptions(group, topics, out) or bump
        target.ask_regex_resolution(group, topics, now, out, self.config.regex_refresh_min_interval_ms)
        if bump:
            target.bump_group_epoch(group, out)
        if group.group_epoch > group.assignment_epoch:
            target.compute_target(group, out, self.config.default_assignor)

        reconciled = reconcile(
            updated, group.assignment_epoch, group.target_of(member_id), group.owner_epoch, owned
        )
        if new_member or reconciled.reconciliation() != updated.reconciliation():
            group.put_member(reconciled)
            out.records.append(records.current_assignment(group.group_id, reconciled))
            revocation_deadline = (
                now + max(reconciled.rebalance_timeout_ms, 0)
                if reconciled.state == MemberState.UNREVOKED_PARTITIONS
                else None
            )
            out.timers.append((("revocation", group.group_id, member_id), revocation_deadline))
        return reconciled

    def _interval(self, group: ConsumerGroup) -> int:
        if group.state == ConsumerGroupState.STABLE:
            return self.config.heartbeat_interval_ms
        return min(self.config.reconciling_heartbeat_interval_ms, self.config.heartbeat_interval_ms)

    def _member_for(
        self, group: ConsumerGroup, request: HeartbeatRequest, member_id: str
    ) -> tuple[ConsumerMember, ConsumerMember | None]:
        """The member this heartbeat speaks for, and the static member it replaces, if any."""
        joining = request.member_epoch == JOIN_EPOCH
        if request.instance_id is None:
            member = group.members.get(member_id)
            if member is None:
                if not joining:
                    raise Refused(
                        ErrorCode.UNKNOWN_MEMBER_ID,
                        f"Member {member_id} is not a member of group {group.group_id}.",
                    )
                return ConsumerMember(member_id), None
            return (_rejoined(member) if joining else _checked_epoch(member, request)), None
        existing = group.static_member(request.instance_id)
        if joining:
            if existing is None:
                return group.members.get(member_id) or ConsumerMember(member_id), None
            if existing.member_id == member_id:
                return _rejoined(existing), None
            if existing.member_epoch != STATIC_LEAVE_EPOCH:
                raise Refused(
                    ErrorCode.UNRELEASED_INSTANCE_ID,
                    f"Static member {member_id} with instance id {request.instance_id} cannot join the "
                    f"group because the instance id is owned by {existing.member_id} member.",
                )
            return replace(existing, member_id=member_id, member_epoch=0, previous_member_epoch=0), existing
        if existing is None:
            raise Refused(ErrorCode.UNKNOWN_MEMBER_ID, f"Instance id {request.instance_id} is unknown.")
        if existing.member_id != member_id:
            raise Refused(
                ErrorCode.FENCED_INSTANCE_ID,
                f"Static member {member_id} with instance id {request.instance_id} was fenced by "
                f"member {existing.member_id}.",
            )
        return _checked_epoch(existing, request), None

    # --- leaving -------------------------------------------------------------------------

    def _leave(self, request: HeartbeatRequest, topics: Topics, now: int, out: Output) -> HeartbeatResponse:
        group = self._groups.get(request.group_id)
        if group is None:
            raise Refused(ErrorCode.GROUP_ID_NOT_FOUND, f"Consumer group {request.group_id} not found.")
        if request.instance_id is None:
            member = group.members.get(request.member_id)
            if member is None:
                raise Refused(
                    ErrorCode.UNKNOWN_MEMBER_ID,
                    f"Member {request.member_id} is not a member of group {group.group_id}.",
                )
        else:
            member = group.static_member(request.instance_id)
            if member is None:
                raise Refused(ErrorCode.UNKNOWN_MEMBER_ID, f"Instance id {request.instance_id} is unknown.")
            if member.member_id != request.member_id:
                raise Refused(
                    ErrorCode.FENCED_INSTANCE_ID,
                    f"Static member {request.member_id} with instance id {request.instance_id} was "
                    f"fenced by member {member.member_id}.",
                )
            if request.member_epoch == STATIC_LEAVE_EPOCH:
                # It will be back within its session: its partitions wait for it.
                away = replace(member, member_epoch=STATIC_LEAVE_EPOCH, pending_revocation={})
                group.put_member(away)
                out.records.append(records.current_assignment(group.group_id, away))
                out.timers.append((("revocation", group.group_id, member.member_id), None))
                return HeartbeatResponse(
                    ErrorCode.NONE, member_id=member.member_id, member_epoch=STATIC_LEAVE_EPOCH
                )
        self._fence(group, member.member_id, topics, now, out)
        return HeartbeatResponse(
            ErrorCode.NONE, member_id=request.member_id, member_epoch=request.member_epoch
        )

    def _fence(self, group: ConsumerGroup, member_id: str, topics: Topics, now: int, out: Output) -> None:
        group.remove_member(member_id)
        out.records += records.member_tombstones(group.group_id, member_id)
        out.timers += [(("session", group.group_id, member_id), None)]
        out.timers += [(("revocation", group.group_id, member_id), None)]
        target.refresh_subscriptions(group, topics, out)
        target.bump_group_epoch(group, out)

    # --- timers --------------------------------------------------------------------------

    def on_timer(self, key: Hashable, topics: Topics, now: int) -> Outcome[None]:
        """A deadline this coordinator asked for has passed."""
        out = Output()
        assert isinstance(key, tuple)
        kind_, group_id, member_id = key
        group = self._groups.get(group_id)
        member = None if group is None else group.members.get(member_id)
        expired = member is not None and (
            kind_ == "session" or member.state == MemberState.UNREVOKED_PARTITIONS
        )
        if group is not None and expired:
            self._fence(group, member_id, topics, now, out)
        elif group is not None and kind_ == target.REGEX_RESOLUTION:
            target.resolve_regexes(group, topics, now, out)
        return out.result(None)

    # --- offsets of consumer groups ------------------------------------------------------

    def validate_commit(
        self, group_id: str, member_id: str, member_epoch: int, api_version: int
    ) -> ErrorCode | None:
        """Kafka's ConsumerGroup.validateOffsetCommit (None: the commit may go ahead)."""
        group = self._groups[group_id]
        if member_epoch < 0 and not group.members:
            return None  # an admin tool or a consumer without group management
        member = group.members.get(member_id)
        if member is None:
            return ErrorCode.UNKNOWN_MEMBER_ID
        if member.classic is not None:  # a classic member commits with its generation
            return None if member_epoch == member.member_epoch else ErrorCode.ILLEGAL_GENERATION
        if api_version < 9:
            return ErrorCode.UNSUPPORTED_VERSION  # consumer-protocol members commit with v9+
        return None if member_epoch == member.member_epoch else ErrorCode.STALE_MEMBER_EPOCH

    def validate_fetch(self, group_id: str, member_id: str | None, member_epoch: int) -> ErrorCode | None:
        """Kafka's ConsumerGroup.validateOffsetFetch (None: the fetch may go ahead)."""
        if member_id is None and member_epoch < 0:
            return None
        member = self._groups[group_id].members.get(member_id or "")
        if member is None:
            return ErrorCode.UNKNOWN_MEMBER_ID
        return None if member_epoch == member.member_epoch else ErrorCode.STALE_MEMBER_EPOCH

    # --- administration ------------------------------------------------------------------

    def describe(self, group_id: str, topics: Topics) -> GroupDescription:
        group = self._groups.get(group_id)
        if group is None:
            return GroupDescription(ErrorCode.GROUP_ID_NOT_FOUND, f"Group {group_id} not found.", group_id)
        members = tuple(
            MemberDescription(
                m.member_id,
                m.instance_id,
                m.rack_id,
                m.member_epoch,
                m.client_id,
                m.client_host,
                m.subscribed_topic_names,
                m.subscribed_topic_regex,
                m.assigned,
                group.target_of(m.member_id),
                m.classic is not None,
            )
            for m in group.members.values()
        )
        return GroupDescription(
            ErrorCode.NONE,
            None,
            group_id,
            group.state.value,
            group.group_epoch,
            group.assignment_epoch,
            group.preferred_assignor(self.config.default_assignor),
            members,
        )

    def delete_empty(self, group_id: str) -> Outcome[ErrorCode]:
        """Remove an empty group's own records (its offsets are the offsets store's)."""
        group = self._groups.get(group_id)
        if group is None:
            return Outcome(ErrorCode.GROUP_ID_NOT_FOUND)
        if group.members:
            return Outcome(ErrorCode.NON_EMPTY_GROUP)
        del self._groups[group_id]
        return Outcome(ErrorCode.NONE, tuple(records.group_tombstones(group)))


def _validate(request: HeartbeatRequest, config: ConsumerGroupConfig) -> None:
    """Kafka's throwIfConsumerGroupHeartbeatRequestIsInvalid."""

    def invalid(message: str) -> Refused:
        return Refused(ErrorCode.INVALID_REQUEST, message)

    if not request.group_id:
        raise invalid("GroupId can't be empty.")
    if request.instance_id == "":
        raise invalid("InstanceId can't be empty.")
    if request.rack_id == "":
        raise invalid("RackId can't be empty.")
    epoch = request.member_epoch
    if (request.api_version >= 1 or epoch != JOIN_EPOCH) and not request.member_id:
        raise invalid("MemberId can't be empty.")
    if epoch == JOIN_EPOCH:
        if request.rebalance_timeout_ms == -1:
            raise invalid("RebalanceTimeoutMs must be provided in first request.")
        if request.owned is None or request.owned:
            raise invalid("TopicPartitions must be empty when (re-)joining.")
        if config.join_needs_topic_names and not request.subscribed_topic_names:
            raise invalid("SubscribedTopicNames must be set in first request.")
        if request.subscribed_topic_names is None and request.subscribed_topic_regex is None:
            raise invalid(
                "Either SubscribedTopicNames or SubscribedTopicRegex must be non-null when (re-)joining."
            )
    elif epoch == STATIC_LEAVE_EPOCH:
        if request.instance_id is None:
            raise invalid("InstanceId can't be null.")
    elif epoch < LEAVE_EPOCH:
        raise invalid("MemberEpoch is invalid.")
    if request.server_assignor is not None and request.server_assignor not in config.assignors:
        raise Refused(
            ErrorCode.UNSUPPORTED_ASSIGNOR,
            f"ServerAssignor {request.server_assignor} is not supported. "
            f"Supported assignors: {', '.join(config.assignors)}.",
        )
    if request.subscribed_topic_regex:
        try:
            subscriptions.check(request.subscribed_topic_regex)
        except subscriptions.InvalidRegex as exc:
            raise Refused(ErrorCode.INVALID_REGULAR_EXPRESSION, str(exc)) from exc


def _checked_epoch(member: ConsumerMember, request: HeartbeatRequest) -> ConsumerMember:
    """Kafka's throwIfConsumerGroupMemberEpochIsInvalid: the previous epoch is accepted from a
    member that owns no more than its assignment (the answer that bumped it may be lost)."""
    received = request.member_epoch
    if received > member.member_epoch or (
        received < member.member_epoch
        and (received != member.previous_member_epoch or not is_subset(request.owned, member.assigned))
    ):
        raise Refused(
            ErrorCode.FENCED_MEMBER_EPOCH,
            f"The consumer group member has a {'greater' if received > member.member_epoch else 'smaller'} "
            f"member epoch ({received}) than the one known by the group coordinator "
            f"({member.member_epoch}). The member must abandon all its partitions and rejoin.",
        )
    return member


def _rejoined(member: ConsumerMember) -> ConsumerMember:
    """A known member joining again (epoch 0, no partitions) holds nothing any more."""
    return replace(
        member,
        member_epoch=0,
        previous_member_epoch=0,
        state=MemberState.STABLE,
        assigned={},
        pending_revocation={},
    )


def _updated(member: ConsumerMember, request: HeartbeatRequest) -> ConsumerMember:
    """The fields a heartbeat sets; None (and -1 for the rebalance timeout) keeps the old value.
    An empty regex switches back to topic names."""
    regex = member.subscribed_topic_regex
    if request.subscribed_topic_regex is not None:
        regex = request.subscribed_topic_regex or None
    names = request.subscribed_topic_names
    changes = {
        "instance_id": member.instance_id if request.instance_id is None else request.instance_id,
        "rack_id": member.rack_id if request.rack_id is None else request.rack_id,
        "rebalance_timeout_ms": (
            member.rebalance_timeout_ms
            if request.rebalance_timeout_ms == -1
            else request.rebalance_timeout_ms
        ),
        "server_assignor": member.server_assignor
        if request.server_assignor is None
        else request.server_assignor,
        "subscribed_topic_names": member.subscribed_topic_names if names is None else tuple(names),
        "subscribed_topic_regex": regex,
        "client_id": request.client_id,
        "client_host": request.client_host,
        "classic": None,  # a heartbeat speaks the consumer protocol
    }
    if all(getattr(member, name) == value for name, value in changes.items()):
        return member  # the usual heartbeat: nothing to copy
    return replace(member, **changes)  # type: ignore[arg-type]


__all__ = ["ConsumerGroupCoordinator", "ConsumerGroupState", "Refused"]
