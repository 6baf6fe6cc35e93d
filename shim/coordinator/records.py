"""The coordinator's state as offsets-log records, and back (Kafka's
GroupMetadataManager serialisation, minus the bytes: `protocol.offsets_records`
owns those).

Emitting: every offset stored or removed, and the group's metadata after a
completed rebalance, when it goes Empty, and a tombstone when it dies.
Replaying: the last record of every key rebuilds every group as it is after a
coordinator failover: Empty, its generation and protocol type kept, members
gone (they rejoin), committed offsets intact.
"""

from __future__ import annotations

from collections.abc import Iterable

from kafka_shim.protocol.offsets_records import (
    GroupKey,
    GroupValue,
    MemberValue,
    OffsetKey,
    OffsetsRecord,
    OffsetValue,
)
from kafka_shim.shim.coordinator.group import Group
from kafka_shim.shim.coordinator.types import CommittedOffset, TopicPartition


def offset_record(group_id: str, tp: TopicPartition, offset: CommittedOffset) -> OffsetsRecord:
    value = OffsetValue(
        offset.offset,
        offset.leader_epoch,
        offset.metadata,
        offset.commit_timestamp_ms,
        offset.expire_timestamp_ms,
    )
    return OffsetsRecord(OffsetKey(group_id, tp.topic, tp.partition), value)


def offset_tombstone(group_id: str, tp: TopicPartition) -> OffsetsRecord:
    return OffsetsRecord(OffsetKey(group_id, tp.topic, tp.partition), None)


def group_record(group: Group) -> OffsetsRecord:
    protocol = group.protocol_name
    members = tuple(
        MemberValue(
            member_id=m.member_id,
            group_instance_id=m.group_instance_id,
            client_id=m.client_id,
            client_host=m.client_host,
            rebalance_timeout=m.rebalance_timeout_ms,
            session_timeout=m.session_timeout_ms,
            subscription=m.metadata(protocol) if protocol is not None else b"",
            assignment=m.assignment,
        )
        for m in group.members.values()
    )
    value = GroupValue(
        protocol_type=group.protocol_type or "",
        generation=group.generation_id,
        protocol=protocol,
        leader=group.leader_id if members else None,
        current_state_timestamp=group.state_since_ms,
        members=members,
    )
    return OffsetsRecord(GroupKey(group.group_id), value)


def group_tombstone(group_id: str) -> OffsetsRecord:
    return OffsetsRecord(GroupKey(group_id), None)


def replay(records: Iterable[OffsetsRecord], now: int) -> dict[str, Group]:
    """The groups the records describe: the last record of each key wins and the
    order across keys does not matter (as in Kafka's loader, and as after compaction).
    A group exists if it has live metadata or any live offset."""
    metadata: dict[str, GroupValue | None] = {}
    committed: dict[str, dict[TopicPartition, CommittedOffset | None]] = {}
    for record in records:
        key, value = record.key, record.value
        if isinstance(key, OffsetKey):
            offset = None
            if isinstance(value, OffsetValue):
                offset = CommittedOffset(
                    value.offset,
                    value.leader_epoch,
                    value.metadata,
                    value.commit_timestamp,
                    value.expire_timestamp,
                )
            committed.setdefault(key.group, {})[TopicPartition(key.topic, key.partition)] = offset
        else:
            metadata[key.group] = value if isinstance(value, GroupValue) else None
    groups: dict[str, Group] = {}
    for group_id in [*metadata, *committed]:
        offsets = {tp: o for tp, o in committed.get(group_id, {}).items() if o is not None}
        value = metadata.get(group_id)
        if group_id in groups or (value is None and not offsets):
            continue
        group = groups[group_id] = Group(group_id, now)
        group.offsets = offsets
        if value is not None:
            # The group was Empty since its recorded timestamp, or becomes Empty now.
            recorded = value.current_state_timestamp
            since = recorded if not value.members and recorded >= 0 else now
            group.restore_empty(value.generation, value.protocol_type or None, since)
    return groups
