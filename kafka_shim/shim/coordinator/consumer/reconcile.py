"""Moving one member toward its target assignment (Kafka's CurrentAssignmentBuilder).

A partition reaches its new owner only once nobody holds it: the old owner first gets an
assignment without it (state UNREVOKED_PARTITIONS, epoch unchanged) and must acknowledge
by heartbeating without it among its owned partitions; only then is it free, and the new
owner (waiting in UNRELEASED_PARTITIONS) gets it at its next heartbeat.

| member state  | event                                      | next                               |
|---------------|--------------------------------------------|------------------------------------|
| STABLE        | the target epoch moved                     | next assignment (below)            |
| UNREVOKED     | beat still owns a partition to revoke, or  | UNREVOKED (unchanged)              |
|               | says nothing of what it owns               |                                    |
| UNREVOKED     | beat owns none of them                     | next, at min(epoch + 1, target)    |
| UNRELEASED    | any beat                                   | next (with partitions freed since) |

Next assignment, from current and target: keep current ∩ target; if current - target is
not empty, revoke it first (UNREVOKED_PARTITIONS, epoch kept); else add every partition of
target - current that nobody owns and move to the target epoch, UNRELEASED_PARTITIONS if
some are still owned by others, else STABLE.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable

from kafka_shim.shim.coordinator.consumer.member import ConsumerMember, MemberState
from kafka_shim.shim.coordinator.consumer.types import Assignment

# (topic id, partition) -> the epoch of the member holding it, or None if nobody does.
OwnerEpoch = Callable[[uuid.UUID, int], int | None]


def reconcile(
    member: ConsumerMember,
    target_epoch: int,
    target: Assignment,
    owner_epoch: OwnerEpoch,
    owned: Assignment | None,
) -> ConsumerMember:
    if member.is_reconciled_to(target_epoch):
        return member
    if member.state == MemberState.UNREVOKED_PARTITIONS:
        if _still_owns(owned, member.pending_revocation):
            return member
        return _next(member, min(member.member_epoch + 1, target_epoch), target, owner_epoch)
    return _next(member, target_epoch, target, owner_epoch)


def _still_owns(owned: Assignment | None, revoking: Assignment) -> bool:
    if owned is None:  # the heartbeat said nothing about what it owns: assume it still does
        return True
    return any(parts & owned.get(topic_id, frozenset()) for topic_id, parts in revoking.items())


def _next(
    member: ConsumerMember, move_to: int, target: Assignment, owner_epoch: OwnerEpoch
) -> ConsumerMember:
    """`move_to`: the epoch the member reaches if nothing must be revoked first."""
    kept: dict[uuid.UUID, frozenset[int]] = {}
    revoking: dict[uuid.UUID, frozenset[int]] = {}
    adding: dict[uuid.UUID, frozenset[int]] = {}
    unreleased = False
    for topic_id in target.keys() | member.assigned.keys():
        wanted = target.get(topic_id, frozenset())
        current = member.assigned.get(topic_id, frozenset())
        if keep := current & wanted:
            kept[topic_id] = keep
        if revoke := current - wanted:
            revoking[topic_id] = revoke
        free = frozenset(p for p in wanted - current if owner_epoch(topic_id, p) is None)
        if len(free) < len(wanted - current):
            unreleased = True
        if free:
            adding[topic_id] = free
    if revoking:
        return member.with_epoch(
            member.member_epoch,
            state=MemberState.UNREVOKED_PARTITIONS,
            assigned=kept,
            pending_revocation=revoking,
        )
    for topic_id, parts in adding.items():
        kept[topic_id] = kept.get(topic_id, frozenset()) | parts
    state = MemberState.UNRELEASED_PARTITIONS if unreleased else MemberState.STABLE
    return member.with_epoch(move_to, state=state, assigned=kept, pending_revocation={})
