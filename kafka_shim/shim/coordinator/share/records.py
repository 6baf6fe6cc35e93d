"""A share group's records in `__consumer_offsets` (key types 10-14, Kafka's formats), and
the groups their replay rebuilds."""

from __future__ import annotations

from collections.abc import Iterable

from kafka_shim.protocol import consumer_group_records as kind
from kafka_shim.protocol.consumer_group_records import ConsumerGroupKey, ConsumerGroupValue
from kafka_shim.protocol.offsets_records import OffsetsRecord
from kafka_shim.shim.coordinator.consumer.types import Assignment
from kafka_shim.shim.coordinator.share.group import ShareGroup, ShareMember

STABLE_MEMBER_STATE = 0  # MemberState: a share member is always stable (nothing to revoke)
SHARE_TYPES = frozenset(
    {
        kind.SHARE_MEMBER_METADATA,
        kind.SHARE_GROUP_METADATA,
        kind.SHARE_TARGET_ASSIGNMENT_METADATA,
        kind.SHARE_TARGET_ASSIGNMENT_MEMBER,
        kind.SHARE_CURRENT_MEMBER_ASSIGNMENT,
    }
)


def _record(record_type: int, group_id: str, sub_key: str = "", **fields: object) -> OffsetsRecord:
    return OffsetsRecord(ConsumerGroupKey(record_type, group_id, sub_key), ConsumerGroupValue(dict(fields)))


def _tombstone(record_type: int, group_id: str, sub_key: str = "") -> OffsetsRecord:
    return OffsetsRecord(ConsumerGroupKey(record_type, group_id, sub_key), None)


def group_epoch(group: ShareGroup) -> list[OffsetsRecord]:
    return [
        _record(kind.SHARE_GROUP_METADATA, group.group_id, epoch=group.group_epoch),
        _record(
            kind.SHARE_TARGET_ASSIGNMENT_METADATA, group.group_id, assignment_epoch=group.assignment_epoch
        ),
    ]


def member(group_id: str, member: ShareMember) -> list[OffsetsRecord]:
    """A member's metadata, target and current assignment."""
    return [
        _record(
            kind.SHARE_MEMBER_METADATA,
            group_id,
            member.member_id,
            rack_id=member.rack_id,
            client_id=member.client_id,
            client_host=member.client_host,
            subscribed_topic_names=list(member.subscribed_topic_names),
        ),
        _record(
            kind.SHARE_TARGET_ASSIGNMENT_MEMBER,
            group_id,
            member.member_id,
            topic_partitions=member.assignment,
        ),
        _record(
            kind.SHARE_CURRENT_MEMBER_ASSIGNMENT,
            group_id,
            member.member_id,
            member_epoch=member.member_epoch,
            previous_member_epoch=member.previous_member_epoch,
            state=STABLE_MEMBER_STATE,
            assigned_partitions=member.assignment,
        ),
    ]


def member_tombstones(group_id: str, member_id: str) -> list[OffsetsRecord]:
    # Kafka's order: the current assignment, the target, then the metadata.
    return [
        _tombstone(kind.SHARE_CURRENT_MEMBER_ASSIGNMENT, group_id, member_id),
        _tombstone(kind.SHARE_TARGET_ASSIGNMENT_MEMBER, group_id, member_id),
        _tombstone(kind.SHARE_MEMBER_METADATA, group_id, member_id),
    ]


def group_tombstones(group: ShareGroup) -> list[OffsetsRecord]:
    out = [r for member_id in group.members for r in member_tombstones(group.group_id, member_id)]
    out.append(_tombstone(kind.SHARE_TARGET_ASSIGNMENT_METADATA, group.group_id))
    out.append(_tombstone(kind.SHARE_GROUP_METADATA, group.group_id))
    return out


def replay(records: Iterable[OffsetsRecord]) -> dict[str, ShareGroup]:
    """The share groups the latest record of every key describes (compaction's view)."""
    latest: dict[ConsumerGroupKey, dict[str, object]] = {}
    for record in records:
        key = record.key
        if isinstance(key, ConsumerGroupKey) and key.record_type in SHARE_TYPES:
            if isinstance(record.value, ConsumerGroupValue):
                latest[key] = record.value.fields
            else:
                latest.pop(key, None)
    groups = {k.group: ShareGroup(k.group) for k in latest if k.record_type == kind.SHARE_GROUP_METADATA}
    metadata: dict[tuple[str, str], dict[str, object]] = {}
    current: dict[tuple[str, str], dict[str, object]] = {}
    for key, fields in latest.items():
        group = groups.get(key.group)
        if group is None:
            continue
        if key.record_type == kind.SHARE_GROUP_METADATA:
            group.group_epoch = int(fields["epoch"])  # type: ignore[call-overload]
        elif key.record_type == kind.SHARE_TARGET_ASSIGNMENT_METADATA:
            group.assignment_epoch = int(fields["assignment_epoch"])  # type: ignore[call-overload]
        elif key.record_type == kind.SHARE_MEMBER_METADATA:
            metadata[(key.group, key.sub_key)] = fields
        elif key.record_type == kind.SHARE_CURRENT_MEMBER_ASSIGNMENT:
            current[(key.group, key.sub_key)] = fields
    for (group_id, member_id), fields in metadata.items():
        assigned = current.get((group_id, member_id), {})
        assignment: Assignment = assigned.get("assigned_partitions", {})  # type: ignore[assignment]
        groups[group_id].members[member_id] = ShareMember(
            member_id,
            member_epoch=int(assigned.get("member_epoch", 0)),  # type: ignore[call-overload]
            previous_member_epoch=int(assigned.get("previous_member_epoch", 0)),  # type: ignore[call-overload]
            rack_id=fields["rack_id"],  # type: ignore[arg-type]
            client_id=str(fields["client_id"]),
            client_host=str(fields["client_host"]),
            subscribed_topic_names=tuple(fields["subscribed_topic_names"]),  # type: ignore[call-overload,arg-type]
            assignment=assignment,
        )
    return groups
