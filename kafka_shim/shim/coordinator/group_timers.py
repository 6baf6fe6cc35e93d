"""The classic coordinator's deadlines by kind (`GroupTimer`, types.py; Kafka keys its timers
the same way): a rebalance's join and sync deadlines, each member's session, a pending member
id's wait for its second JoinGroup, and the periodic retention check. What the parts share is
spelled here (a member's session, the retention check's key, cancelling a member's or a whole
group's deadlines); each other deadline is set where its event is (join.py, rebalance.py,
membership.py). The coordinator fires them (`GroupCoordinator.on_timer`).
"""

from __future__ import annotations

import functools

from kafka_shim.shim.coordinator.group import Group
from kafka_shim.shim.coordinator.member import Member
from kafka_shim.shim.coordinator.outcome import Effects
from kafka_shim.shim.coordinator.types import GroupTimer

# Kafka expires a new member's pending JoinGroup after 5 minutes: it cannot heartbeat yet,
# and a client that gave up would otherwise linger in the rebalance.
NEW_MEMBER_JOIN_TIMEOUT_MS = 5 * 60 * 1000

RETENTION = GroupTimer("retention")


def schedule_session(
    group: Group, member: Member, now: int, out: Effects, timeout_ms: int | None = None
) -> None:
    """The member's session (re)starts: it ends `timeout_ms` (its session timeout) from now."""
    timeout = member.session_timeout_ms if timeout_ms is None else timeout_ms
    out.schedule(session_timer(group.group_id, member.member_id), now + timeout)


@functools.lru_cache(maxsize=4096)
def session_timer(group_id: str, member_id: str) -> GroupTimer:
    """A member's session deadline key, made once while the member heartbeats: a heartbeat
    sets it again every few seconds, and the same key object is found by identity in the
    deadlines' dicts (a frozen dataclass compares in Python). Up to 4096 keys stay cached
    (about 0.5 MiB with their ids)."""
    return GroupTimer("session", group_id, member_id)


def cancel_member(group: Group, member_id: str, out: Effects) -> None:
    out.cancel(GroupTimer("session", group.group_id, member_id))
    out.cancel(GroupTimer("pending", group.group_id, member_id))


def cancel_group(group: Group, out: Effects) -> None:
    """Cancel the group's join and sync deadlines and every member's (pending ones too)."""
    for kind in ("join", "sync"):
        out.cancel(GroupTimer(kind, group.group_id))
    for member_id in [*group.members, *group.pending_members]:
        cancel_member(group, member_id, out)
