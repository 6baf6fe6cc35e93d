"""What happened to each group, for the console's timeline and the rebalance counts of /metrics.

Fed from two places that already see everything: the request path (a member's JoinGroup,
SyncGroup, Heartbeat, LeaveGroup, OffsetCommit, ConsumerGroupHeartbeat and its answer) and the
coordinators' deadlines (a session expiring, a rebalance timing out). After either, the group's
shape (type, state, members, generation or epoch) is compared with the last one seen: members
that appeared or vanished and state changes become events, each naming its cause: the request
or the deadline that made it. Pure and clock-free: the caller passes `now` in ms.

Memory is bounded: the last `per_group` events of at most `max_groups` groups (the group first seen
longest ago is forgotten first); a member's consecutive heartbeats, and its repeated requests
with the same answer (commits), fold into one event.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import NamedTuple

# States a group enters when a rebalance starts: classic PreparingRebalance, KIP-848 Assigning.
REBALANCING = frozenset({"PreparingRebalance", "Assigning", "Reconciling"})
_HEARTBEATS = frozenset({"Heartbeat", "ConsumerGroupHeartbeat"})


class GroupShape(NamedTuple):
    group_type: str
    state: str
    members: frozenset[str]
    epoch: int  # classic generation, KIP-848 group epoch


@dataclass
class GroupEvent:
    at_ms: int
    kind: str  # request, joined, left, state, rebalance, heartbeat
    member_id: str
    detail: str
    count: int = 1  # folded heartbeats
    last_ms: int = 0

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
    events: deque[GroupEvent]
    shape: GroupShape | None = None
    rebalances: int = 0
    last_cause: str = field(default="")
    rebalance_cause: str = field(default="")  # what moved the group off Stable, if seen


class GroupJournal:
    def __init__(self, per_group: int = 500, max_groups: int = 10_000) -> None:
        self.per_group = per_group
        self.max_groups = max_groups
        self._groups: dict[str, _GroupHistory] = {}  # in the order first seen

    def _history(self, group_id: str) -> _GroupHistory:
        history = self._groups.get(group_id)
        if history is None:
            history = self._groups[group_id] = _GroupHistory(deque(maxlen=self.per_group))
            if len(self._groups) > self.max_groups:
                del self._groups[next(iter(self._groups))]
        return history

    def request(self, now: int, group_id: str, api: str, member_id: str, error: str) -> None:
        """A member's request about `group_id` was answered (`error`: NONE or the code's name)."""
        history = self._history(group_id)
        if error == "NONE":
            kind, detail = ("heartbeat" if api in _HEARTBEATS else "request"), api
        else:
            kind, detail = "request", f"{api} -> {error}"
        events = history.events
        last = events[-1] if events else None
        if last is not None and last.member_id == member_id and last.detail == detail and last.kind == kind:
            # A member's repeated request with the same answer (heartbeats, a consumer's
            # commits) folds into one event: no new event, nor cause, per request.
            last.count += 1
            last.last_ms = now
            return
        events.append(GroupEvent(now, kind, member_id, detail))
        history.last_cause = f"{api} from {member_id or 'a new member'}"

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
        for member in sorted(new_members - old_members):
            history.events.append(GroupEvent(now, "joined", member, f"member added ({cause})"))
        for member in sorted(old_members - new_members):
            history.events.append(GroupEvent(now, "left", member, f"member removed ({cause})"))
        old_state = before.state if before is not None else "(none)"
        new_state = shape.state if shape is not None else "Dead"
        if new_state != old_state:
            history.events.append(GroupEvent(now, "state", "", f"{old_state} -> {new_state} ({cause})"))
            if new_state in REBALANCING and not history.rebalance_cause:
                history.rebalance_cause = cause
        if (new_members != old_members) and not history.rebalance_cause:
            history.rebalance_cause = cause
        # A rebalance is counted when it completes: a new generation (classic) or group epoch
        # (KIP-848). Its cause is what first unsettled the group, as far as it was seen.
        if shape is not None and before is not None and shape.epoch > before.epoch:
            history.rebalances += 1
            why = history.rebalance_cause or cause
            history.events.append(GroupEvent(now, "rebalance", "", f"rebalance #{history.rebalances}: {why}"))
            history.rebalance_cause = ""
        elif shape is not None and before is None and shape.epoch > 0:
            history.rebalances += 1  # first seen after its first rebalance completed
            history.events.append(
                GroupEvent(now, "rebalance", "", f"rebalance #{history.rebalances}: {cause}")
            )
        history.shape = shape

    def events(self, group_id: str) -> list[GroupEvent]:
        history = self._groups.get(group_id)
        return list(history.events) if history is not None else []

    def rebalances(self) -> dict[str, int]:
        return {group_id: h.rebalances for group_id, h in self._groups.items()}
