"""The share-group manager (Kafka's GroupMetadataManager for share groups): membership,
heartbeats and the server-side assignment, pure and clock-free. Every call takes `now` and
returns one `Outcome`: the answer, the records to append to `__consumer_offsets` first, and
the session timers to set or cancel. A refused request changes nothing.

Transitions (member epochs: 0 joins, -1 leaves):

| member   | event                          | action                                     | next    |
|----------|--------------------------------|--------------------------------------------|---------|
| none     | beat epoch 0                   | add; assign; bump group epoch              | epoch E |
| none     | beat epoch > 0 or -1           | UNKNOWN_MEMBER_ID (GROUP_ID_NOT_FOUND      | none    |
|          |                                | when the group does not exist)             |         |
| epoch E  | beat epoch 0                   | rejoin: its assignment sent again          | epoch E |
| epoch E  | beat epoch other than E        | FENCED_MEMBER_EPOCH                        | epoch E |
| epoch E  | beat E                         | update subscription; if its assignment     | epoch E'|
|          |                                | changed (subscription, topics), bump the   |         |
|          |                                | group epoch and send the new one           |         |
| any      | beat -1, or session deadline   | remove; bump group epoch                   | none    |

The assignment is Kafka's SimpleAssignor for share groups as this broker applies it: every
member is assigned every partition of the topics it subscribes to. Records are shared out
by the share partitions (acquisition locks), not by the assignment, so nothing is revoked.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable
from dataclasses import replace
from typing import NamedTuple

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.protocol.messages.consumer_group_heartbeat import JOIN_EPOCH, LEAVE_EPOCH
from kafka_shim.protocol.offsets_records import OffsetsRecord
from kafka_shim.shim.coordinator.consumer.replayed import ReplayedGroups
from kafka_shim.shim.coordinator.consumer.types import Assignment, Topics
from kafka_shim.shim.coordinator.outcome import Outcome
from kafka_shim.shim.coordinator.share import records
from kafka_shim.shim.coordinator.share.config import ShareGroupConfig
from kafka_shim.shim.coordinator.share.group import ShareGroup, ShareMember

ASSIGNOR_NAME = "simple"


class ShareSessionTimer(NamedTuple):
    """The heartbeat deadline of one share-group member."""

    group_id: str
    member_id: str


class ShareHeartbeat(NamedTuple):
    """ShareGroupHeartbeat; None stands for "unchanged since the last heartbeat"."""

    group_id: str
    member_id: str
    member_epoch: int
    rack_id: str | None = None
    subscribed_topic_names: tuple[str, ...] | None = None
    client_id: str = ""
    client_host: str = ""


class ShareHeartbeatAnswer(NamedTuple):
    error: ErrorCode
    message: str | None = None
    member_id: str | None = None
    member_epoch: int = 0
    heartbeat_interval_ms: int = 0
    assignment: Assignment | None = None  # None: unchanged


class _Refused(Exception):
    def __init__(self, error: ErrorCode, message: str) -> None:
        super().__init__(message)
        self.error = error
        self.message = message


def assignment_for(subscribed: Iterable[str], topics: Topics) -> Assignment:
    """Every partition of every subscribed topic that exists."""
    found = (topics.by_name(name) for name in subscribed)
    return {t.topic_id: frozenset(range(t.partitions)) for t in found if t is not None and t.partitions}


class ShareGroupManager(ReplayedGroups[ShareGroup]):
    def __init__(self, config_of: Callable[[str], ShareGroupConfig]) -> None:
        super().__init__()
        # A group's settings: the broker's, with the group's own configs over them.
        self.config_of = config_of

    def _replay(self, log: Iterable[OffsetsRecord]) -> dict[str, ShareGroup]:
        return records.replay(log)

    def _session_timers(self, group: ShareGroup, now: int) -> Iterable[tuple[Hashable, int]]:
        timeout = self.config_of(group.group_id).session_timeout_ms
        return ((ShareSessionTimer(group.group_id, m), now + timeout) for m in group.members)

    # --- ShareGroupHeartbeat ----------------------------------------------------------------

    def heartbeat(self, request: ShareHeartbeat, topics: Topics, now: int) -> Outcome[ShareHeartbeatAnswer]:
        try:
            _validate(request)
            if request.member_epoch == LEAVE_EPOCH:
                return self._leave(request.group_id, request.member_id)
            return self._beat(request, topics, now)
        except _Refused as refused:
            return Outcome(ShareHeartbeatAnswer(refused.error, refused.message))

    def _beat(self, request: ShareHeartbeat, topics: Topics, now: int) -> Outcome[ShareHeartbeatAnswer]:
        config = self.config_of(request.group_id)
        joining = request.member_epoch == JOIN_EPOCH
        group = self._groups.get(request.group_id)
        if group is None:
            if not joining:
                raise _Refused(ErrorCode.GROUP_ID_NOT_FOUND, f"Group {request.group_id} not found.")
            group = ShareGroup(request.group_id)
        member = group.members.get(request.member_id)
        if member is None:
            if not joining:
                raise _Refused(
                    ErrorCode.UNKNOWN_MEMBER_ID,
                    f"Member {request.member_id} is not a member of group {request.group_id}.",
                )
            if len(group.members) >= config.max_size:
                raise _Refused(
                    ErrorCode.GROUP_MAX_SIZE_REACHED,
                    f"The share group has reached its maximum capacity of {config.max_size} members.",
                )
            member = ShareMember(request.member_id)
        elif not joining and request.member_epoch != member.member_epoch:
            raise _Refused(
                ErrorCode.FENCED_MEMBER_EPOCH,
                f"The share group member has an epoch {request.member_epoch} that differs from "
                f"the current epoch {member.member_epoch}.",
            )
        updated = replace(
            member,
            rack_id=member.rack_id if request.rack_id is None else request.rack_id,
            client_id=request.client_id,
            client_host=request.client_host,
            subscribed_topic_names=(
                member.subscribed_topic_names
                if request.subscribed_topic_names is None
                else tuple(sorted(set(request.subscribed_topic_names)))
            ),
        )
        updated = replace(updated, assignment=assignment_for(updated.subscribed_topic_names, topics))
        out: list[OffsetsRecord] = []
        new_member = request.member_id not in group.members
        if new_member or updated.assignment != member.assignment:
            group.group_epoch += 1
            group.assignment_epoch = group.group_epoch
            updated = replace(
                updated, member_epoch=group.group_epoch, previous_member_epoch=member.member_epoch
            )
            out += records.group_epoch(group)
        if updated != member or new_member:
            out += records.member(group.group_id, updated)
        group.members[updated.member_id] = updated
        self._groups[group.group_id] = group
        changed = joining or updated.assignment != member.assignment
        answer = ShareHeartbeatAnswer(
            ErrorCode.NONE,
            member_id=updated.member_id,
            member_epoch=updated.member_epoch,
            heartbeat_interval_ms=config.heartbeat_interval_ms,
            assignment=updated.assignment if changed else None,
        )
        timer = (ShareSessionTimer(group.group_id, updated.member_id), now + config.session_timeout_ms)
        return Outcome(answer, tuple(out), (timer,))

    def _leave(self, group_id: str, member_id: str) -> Outcome[ShareHeartbeatAnswer]:
        group = self._groups.get(group_id)
        if group is None:
            raise _Refused(ErrorCode.GROUP_ID_NOT_FOUND, f"Group {group_id} not found.")
        if member_id not in group.members:
            raise _Refused(
                ErrorCode.UNKNOWN_MEMBER_ID, f"Member {member_id} is not a member of group {group_id}."
            )
        removed = self._remove(group, member_id)
        return removed._replace(response=ShareHeartbeatAnswer(ErrorCode.NONE, None, member_id, LEAVE_EPOCH))

    def _remove(self, group: ShareGroup, member_id: str) -> Outcome[ShareHeartbeatAnswer]:
        del group.members[member_id]
        group.group_epoch += 1
        group.assignment_epoch = group.group_epoch
        out = records.member_tombstones(group.group_id, member_id) + records.group_epoch(group)
        timer = (ShareSessionTimer(group.group_id, member_id), None)
        return Outcome(ShareHeartbeatAnswer(ErrorCode.NONE), tuple(out), (timer,))

    def on_timer(self, timer: ShareSessionTimer, now: int) -> Outcome[None]:
        """A member's session expired: it is removed, as if it had left."""
        group = self._groups.get(timer.group_id)
        if group is None or timer.member_id not in group.members:
            return Outcome(None)
        removed = self._remove(group, timer.member_id)
        return Outcome(None, removed.records, removed.timers)

    # --- admin ------------------------------------------------------------------------------

    def delete_refusal(self, group_id: str) -> ErrorCode:
        """Why DeleteGroups may not delete the group (NONE if it may): only an empty one goes."""
        group = self._groups.get(group_id)
        if group is None:
            return ErrorCode.GROUP_ID_NOT_FOUND
        return ErrorCode.NON_EMPTY_GROUP if group.members else ErrorCode.NONE

    def delete(self, group_id: str) -> Outcome[ErrorCode]:
        """DeleteGroups: the group's records go, if delete_refusal allows."""
        refusal = self.delete_refusal(group_id)
        if refusal != ErrorCode.NONE:
            return Outcome(refusal)
        group = self._groups.pop(group_id)
        return Outcome(ErrorCode.NONE, tuple(records.group_tombstones(group)))


def _validate(request: ShareHeartbeat) -> None:
    if not request.group_id:
        raise _Refused(ErrorCode.INVALID_REQUEST, "GroupId can't be empty.")
    if not request.member_id:
        raise _Refused(ErrorCode.INVALID_REQUEST, "MemberId can't be empty.")
    if request.rack_id is not None and not request.rack_id:
        raise _Refused(ErrorCode.INVALID_REQUEST, "RackId can't be empty.")
    if request.member_epoch < LEAVE_EPOCH:
        raise _Refused(ErrorCode.INVALID_REQUEST, f"MemberEpoch is invalid: {request.member_epoch}.")
    if request.member_epoch == JOIN_EPOCH and not request.subscribed_topic_names:
        raise _Refused(ErrorCode.INVALID_REQUEST, "SubscribedTopicNames must be set in first request.")
