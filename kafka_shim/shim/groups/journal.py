"""What happened to each group, for the console's timeline and the rebalance counts of /metrics.

Fed from two places that already see everything: the request path (a member's JoinGroup,
SyncGroup, Heartbeat, LeaveGroup, OffsetCommit, ConsumerGroupHeartbeat and its answer; a JoinGroup
or SyncGroup also when it arrives, since its answer may wait for the whole rebalance) and the
coordinators' deadlines (a session expiring, a rebalance timing out). After either, the group's
shape (type, state, members, generation or epoch) is compared with the last one seen: members
that appeared or vanished and state changes become events, each naming its cause: the request
or the deadline that made it. A rebalance names what first unsettled the group (the member whose
JoinGroup moved it to PreparingRebalance, say). Pure and clock-free: the caller passes `now` in ms.

Memory is bounded by time and count together: events of the last `retention_ms` of the broker's
clock, at most `max_events` across all groups (the oldest go first), for at most `max_groups`
groups. Routine traffic folds into one event per member however the members' requests
interleave: a member's heartbeats (and repeated commits with the same answer) add to its latest
such event while only routine traffic has come since, so three members heartbeating leave the
rebalances in view.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from itertools import islice
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from kafka_shim.shim.coordinator.consumer.classic import MigratingCoordinator
    from kafka_shim.shim.coordinator.coordinator import GroupCoordinator
    from kafka_shim.shim.coordinator.share.manager import ShareGroupManager

# States a group enters when a rebalance starts: classic PreparingRebalance, KIP-848 Assigning.
REBALANCING = frozenset({"PreparingRebalance", "Assigning", "Reconciling"})
_HEARTBEATS = frozenset({"Heartbeat", "ConsumerGroupHeartbeat", "ShareGroupHeartbeat"})
# Requests every member sends over and over: each member's fold into its own latest event.
_ROUTINE = _HEARTBEATS | {"OffsetCommit"}
# How far back a routine request looks for its member's event to fold into (members' interleaved
# routine events): a bound on the work per request, far above any group's member count in view.
_FOLD_WINDOW = 256
NEW_MEMBER = "a new member"


class GroupShape(NamedTuple):
    group_type: str
    state: str
    members: frozenset[str]
    epoch: int  # classic generation, KIP-848 group epoch


def group_shape(
    groups: GroupCoordinator,
    consumer_groups: MigratingCoordinator,
    share_groups: ShareGroupManager,
    group_id: str,
) -> GroupShape | None:
    """The group's type, state, member ids and generation (or epoch), cheaply: read after every
    group request and deadline for the journal."""
    consumer_group = consumer_groups.group(group_id)
    if consumer_group is not None:
        return GroupShape(
            "consumer",
            consumer_group.state.value,
            frozenset(consumer_group.members),
            consumer_group.group_epoch,
        )
    share_group = share_groups.group(group_id)
    if share_group is not None:
        return GroupShape(
            "share", share_group.state.value, frozenset(share_group.members), share_group.group_epoch
        )
    group = groups.group(group_id)
    if group is None:
        return None
    return GroupShape("classic", group.state.value, frozenset(group.members), group.generation_id)


@dataclass
class GroupEvent:
    at_ms: int
    kind: str  # request, joined, left, state, rebalance, heartbeat
    member_id: str
    detail: str
    count: int = 1  # folded heartbeats
    last_ms: int = 0
    routine: bool = False  # a heartbeat or commit, which later ones of its member fold into

    def as_json(self) -> dict[str, object]:
        return {
            "at_ms": self.at_ms,
            "last_ms": self.last_ms or self.at_ms,
            "kind": self.kind,
            "member_id": self.member_id,
            "detail": self.detail,
            "count": self.count,
        }


@dataclass
class _GroupHistory:
    events: deque[GroupEvent] = field(default_factory=deque)
    shape: GroupShape | None = None
    rebalances: int = 0
    last_cause: str = field(default="")
    rebalance_cause: str = field(default="")  # what moved the group off Stable, if seen


class GroupJournal:
    def __init__(
        self, retention_ms: int = 3_600_000, max_events: int = 100_000, max_groups: int = 10_000
    ) -> None:
        self.retention_ms = retention_ms
        self.max_events = max_events
        self.max_groups = max_groups
        self._groups: dict[str, _GroupHistory] = {}  # in the order first seen
        # Every group's events in the order they were added: what to forget first.
        self._added: deque[tuple[_GroupHistory, GroupEvent]] = deque()

    def _history(self, group_id: str) -> _GroupHistory:
        history = self._groups.get(group_id)
        if history is None:
            history = self._groups[group_id] = _GroupHistory()
            if len(self._groups) > self.max_groups:
                forgotten = self._groups.pop(next(iter(self._groups)))
                forgotten.events.clear()  # its entries in _added go as they come to the front
        return history

    def _add(self, now: int, history: _GroupHistory, event: GroupEvent) -> None:
        history.events.append(event)
        self._added.append((history, event))
        added = self._added
        while added and (len(added) > self.max_events or added[0][1].at_ms < now - self.retention_ms):
            owner, oldest = added.popleft()
            if owner.events and owner.events[0] is oldest:
                owner.events.popleft()

    def request(self, now: int, group_id: str, api: str, member_id: str, error: str) -> None:
        """A member's request about `group_id` was answered (`error`: NONE or the code's name)."""
        history = self._history(group_id)
        if error == "NONE":
            kind, detail = ("heartbeat" if api in _HEARTBEATS else "request"), api
        else:
            kind, detail = "request", f"{api} -> {error}"
        routine = api in _ROUTINE
        folded = self._same_routine(history.events, kind, member_id, detail) if routine else None
        if folded is not None:
            # A member's repeated request with the same answer (heartbeats, a consumer's
            # commits) folds into one event: no new event, nor cause, per request.
            folded.count += 1
            folded.last_ms = now
            return
        self._add(now, history, GroupEvent(now, kind, member_id, detail, routine=routine))
        history.last_cause = f"{api} from {member_id or NEW_MEMBER}"

    @staticmethod
    def _same_routine(events: deque[GroupEvent], kind: str, member_id: str, detail: str) -> GroupEvent | None:
        """The member's latest event of this routine request, if only routine ones came since."""
        if events:  # the group's last event: a lone member's heartbeats and commits, at once
            last = events[-1]
            if not last.routine:
                return None
            if last.member_id == member_id and last.detail == detail and last.kind == kind:
                return last
        for event in islice(reversed(events), _FOLD_WINDOW):
            if not event.routine:
                return None
            if event.member_id == member_id and event.detail == detail and event.kind == kind:
                return event
        return None

    def arrived(self, group_id: str, api: str, member_id: str) -> None:
        """A JoinGroup or SyncGroup reached the coordinator; its answer may come much later (at the
        rebalance's end): what the group does now (PreparingRebalance) is this request's doing."""
        self._history(group_id).last_cause = f"{api} from {member_id or NEW_MEMBER}"

    def deadline(self, group_id: str, kind: str, member_id: str) -> None:
        """A coordinator's deadline for the group passed; what follows is its doing."""
        who = f" of {member_id}" if member_id else ""
        self._history(group_id).last_cause = f"{kind} timeout{who}"

    def observe(self, now: int, group_id: str, shape: GroupShape | None) -> None:
        """The group's shape after a request or deadline (None: the group is gone)."""
        history = self._history(group_id)
        before, cause = history.shape, history.last_cause
        if shape == before:
            return
        old_members = before.members if before is not None else frozenset()
        new_members = shape.members if shape is not None else frozenset()
        added = sorted(new_members - old_members)
        if cause.endswith(f" from {NEW_MEMBER}") and len(added) == 1:
            cause = history.last_cause = cause.replace(NEW_MEMBER, added[0])  # the id it was given
        for member in added:
            self._add(now, history, GroupEvent(now, "joined", member, f"member added ({cause})"))
        for member in sorted(old_members - new_members):
            self._add(now, history, GroupEvent(now, "left", member, f"member removed ({cause})"))
        old_state = before.state if before is not None else "(none)"
        new_state = shape.state if shape is not None else "Dead"
        if new_state != old_state:
            self._add(now, history, GroupEvent(now, "state", "", f"{old_state} -> {new_state} ({cause})"))
            if new_state in REBALANCING and not history.rebalance_cause:
                history.rebalance_cause = cause
        if (new_members != old_members) and not history.rebalance_cause:
            history.rebalance_cause = cause
        # A rebalance is counted when it completes: a new generation (classic) or group epoch
        # (KIP-848). Its cause is what first unsettled the group, as far as it was seen.
        if shape is not None and before is not None and shape.epoch > before.epoch:
            history.rebalances += 1
            why = history.rebalance_cause or cause
            self._add(
                now, history, GroupEvent(now, "rebalance", "", f"rebalance #{history.rebalances}: {why}")
            )
            history.rebalance_cause = ""
        elif shape is not None and before is None and shape.epoch > 0:
            history.rebalances += 1  # first seen after its first rebalance completed
            self._add(
                now, history, GroupEvent(now, "rebalance", "", f"rebalance #{history.rebalances}: {cause}")
            )
        history.shape = shape

    def events(self, group_id: str) -> list[GroupEvent]:
        history = self._groups.get(group_id)
        return list(history.events) if history is not None else []

    def rebalances(self) -> dict[str, int]:
        return {group_id: h.rebalances for group_id, h in self._groups.items()}
