"""Consumer groups as `__consumer_offsets` records (Kafka's GroupCoordinatorRecordHelpers),
and back (its replay): after a restart every group, member, epoch and assignment is as it was.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from typing import Any

from kafka_shim.protocol import consumer_group_records as kind
from kafka_shim.protocol.consumer_group_records import ConsumerGroupKey, ConsumerGroupValue
from kafka_shim.protocol.offsets_records import OffsetsRecord
from kafka_shim.shim.coordinator.consumer.group import ConsumerGroup
from kafka_shim.shim.coordinator.consumer.member import ClassicMetadata, ConsumerMember, MemberState
from kafka_shim.shim.coordinator.consumer.types import Assignment, TopicInfo
from kafka_shim.shim.coordinator.types import Protocol


def _record(record_type: int, group_id: str, sub_key: str = "", **fields: object) -> OffsetsRecord:
    return OffsetsRecord(ConsumerGroupKey(record_type, group_id, sub_key), ConsumerGroupValue(fields))


def tombstone(record_type: int, group_id: str, sub_key: str = "") -> OffsetsRecord:
    return OffsetsRecord(ConsumerGroupKey(record_type, group_id, sub_key), None)


def group_epoch(group_id: str, epoch: int) -> OffsetsRecord:
    return _record(kind.GROUP_METADATA, group_id, epoch=epoch)


def partition_metadata(group_id: str, topics: dict[str, TopicInfo]) -> OffsetsRecord:
    described = [
        {
            "topic_id": t.topic_id,
            "topic_name": t.name,
            "num_partitions": t.partitions,
            "partition_metadata": [],
        }
        for t in sorted(topics.values(), key=lambda t: t.name)
    ]
    return _record(kind.PARTITION_METADATA, group_id, topics=described)


def member_metadata(group_id: str, member: ConsumerMember) -> OffsetsRecord:
    return _record(
        kind.MEMBER_METADATA,
        group_id,
        member.member_id,
        instance_id=member.instance_id,
        rack_id=member.rack_id,
        client_id=member.client_id,
        client_host=member.client_host,
        subscribed_topic_names=list(member.subscribed_topic_names),
        subscribed_topic_regex=member.subscribed_topic_regex,
        rebalance_timeout_ms=member.rebalance_timeout_ms,
        server_assignor=member.server_assignor,
        classic_member_metadata=None
        if member.classic is None
        else {
            "session_timeout_ms": member.classic.session_timeout_ms,
            "supported_protocols": [
                {"name": p.name, "metadata": p.metadata} for p in member.classic.protocols
            ],
        },
    )


def target_member(group_id: str, member_id: str, assignment: Assignment) -> OffsetsRecord:
    return _record(kind.TARGET_ASSIGNMENT_MEMBER, group_id, member_id, topic_partitions=assignment)


def target_epoch(group_id: str, epoch: int) -> OffsetsRecord:
    return _record(kind.TARGET_ASSIGNMENT_METADATA, group_id, assignment_epoch=epoch)


def current_assignment(group_id: str, member: ConsumerMember) -> OffsetsRecord:
    return _record(
        kind.CURRENT_MEMBER_ASSIGNMENT,
        group_id,
        member.member_id,
        member_epoch=member.member_epoch,
        previous_member_epoch=member.previous_member_epoch,
        state=int(member.state),
        assigned_partitions=member.assigned,
        partitions_pending_revocation=member.pending_revocation,
    )


def regular_expression(
    group_id: str, regex: str, topics: frozenset[str], version: int, now: int
) -> OffsetsRecord:
    return _record(
        kind.REGULAR_EXPRESSION, group_id, regex, topics=sorted(topics), version=version, timestamp=now
    )


def member_tombstones(group_id: str, member_id: str) -> list[OffsetsRecord]:
    """In Kafka's order: current assignment, target assignment, then the member itself."""
    return [
        tombstone(kind.CURRENT_MEMBER_ASSIGNMENT, group_id, member_id),
        tombstone(kind.TARGET_ASSIGNMENT_MEMBER, group_id, member_id),
        tombstone(kind.MEMBER_METADATA, group_id, member_id),
    ]


def group_tombstones(group: ConsumerGroup) -> list[OffsetsRecord]:
    """Everything a group wrote, deleted (its members' records too, if it has any left)."""
    dead = [r for m in group.members for r in member_tombstones(group.group_id, m)]
    dead += [tombstone(kind.REGULAR_EXPRESSION, group.group_id, r) for r in group.resolved_regexes]
    for record_type in (kind.TARGET_ASSIGNMENT_METADATA, kind.PARTITION_METADATA, kind.GROUP_METADATA):
        dead.append(tombstone(record_type, group.group_id))
    return dead


def is_consumer_group_record(record: OffsetsRecord) -> bool:
    return isinstance(record.key, ConsumerGroupKey)


def replay(records: Iterable[OffsetsRecord]) -> dict[str, ConsumerGroup]:
    """The groups the latest record of every key describes (the log as compaction leaves it;
    the order across keys does not matter). A group exists while its metadata record lives."""
    latest: dict[ConsumerGroupKey, dict[str, object]] = {}
    for record in records:
        if isinstance(record.key, ConsumerGroupKey):
            if isinstance(record.value, ConsumerGroupValue):
                latest[record.key] = record.value.fields
            else:
                latest.pop(record.key, None)
    groups = {key.group: ConsumerGroup(key.group) for key in latest if key.record_type == kind.GROUP_METADATA}
    members: dict[tuple[str, str], ConsumerMember] = {}
    for key, fields in latest.items():
        group = groups.get(key.group)
        if group is None:
            continue
        if key.record_type == kind.GROUP_METADATA:
            group.group_epoch = _int(fields["epoch"])
        elif key.record_type == kind.TARGET_ASSIGNMENT_METADATA:
            group.assignment_epoch = _int(fields["assignment_epoch"])
        elif key.record_type == kind.PARTITION_METADATA:
            group.subscription_metadata = {
                t.topic_name: TopicInfo(t.topic_id, t.topic_name, t.num_partitions)
                for t in fields["topics"]  # type: ignore[attr-defined]
            }
        elif key.record_type == kind.REGULAR_EXPRESSION:
            group.resolved_regexes[key.sub_key] = frozenset(fields["topics"])  # type: ignore[call-overload]
            group.regexes_resolved_at = _int(fields["timestamp"])
        elif key.record_type == kind.TARGET_ASSIGNMENT_MEMBER:
            group.target[key.sub_key] = _assignment(fields["topic_partitions"])
        elif key.record_type == kind.MEMBER_METADATA:
            members[(key.group, key.sub_key)] = ConsumerMember(
                key.sub_key,
                instance_id=fields["instance_id"],  # type: ignore[arg-type]
                rack_id=fields["rack_id"],  # type: ignore[arg-type]
                client_id=str(fields["client_id"]),
                client_host=str(fields["client_host"]),
                subscribed_topic_names=tuple(fields["subscribed_topic_names"]),  # type: ignore[call-overload,arg-type]
                subscribed_topic_regex=fields["subscribed_topic_regex"],  # type: ignore[arg-type]
                rebalance_timeout_ms=_int(fields["rebalance_timeout_ms"]),
                server_assignor=fields["server_assignor"],  # type: ignore[arg-type]
                classic=_classic(fields.get("classic_member_metadata")),
            )
    for key, fields in latest.items():
        member = members.get((key.group, key.sub_key))
        if key.record_type == kind.CURRENT_MEMBER_ASSIGNMENT and member is not None:
            members[(key.group, key.sub_key)] = ConsumerMember(
                **{
                    **member.__dict__,
                    "member_epoch": _int(fields["member_epoch"]),
                    "previous_member_epoch": _int(fields["previous_member_epoch"]),
                    "state": MemberState(_int(fields["state"])),
                    "assigned": _assignment(fields["assigned_partitions"]),
                    "pending_revocation": _assignment(fields["partitions_pending_revocation"]),
                }
            )
    for (group_id, _), member in members.items():
        groups[group_id].put_member(member)
    for group in groups.values():  # targets of members that are gone mean nothing
        group.target = {m: a for m, a in group.target.items() if m in group.members}
    return groups


def _classic(value: Any) -> ClassicMetadata | None:
    if value is None:
        return None
    protocols = tuple(Protocol(p.name, bytes(p.metadata)) for p in value.supported_protocols)
    return ClassicMetadata(value.session_timeout_ms, protocols)


def _int(value: object) -> int:
    assert isinstance(value, int)
    return value


def _assignment(value: object) -> Assignment:
    assert isinstance(value, dict)
    return {uuid.UUID(str(k)) if not isinstance(k, uuid.UUID) else k: v for k, v in value.items()}
