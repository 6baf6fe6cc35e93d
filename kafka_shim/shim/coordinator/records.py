"""The classic coordinator's state as offsets-log records (Kafka's GroupCoordinatorRecordHelpers,
minus the bytes: `protocol.offsets_records` owns those): every offset stored or removed
(inside a transaction: as that producer's), and the group's metadata after a completed
rebalance, when it goes Empty, and a tombstone when it dies. replay.py reads them back.
"""

from __future__ import annotations

from kafka_shim.protocol.offsets_records import (
    GroupKey,
    GroupValue,
    MemberValue,
    OffsetKey,
    OffsetsRecord,
    OffsetValue,
)
from kafka_shim.protocol.records import NO_PRODUCER_EPOCH, NO_PRODUCER_ID
from kafka_shim.protocol.tuples import fields_given, new_tuple
from kafka_shim.shim.coordinator.group import Group
from kafka_shim.shim.coordinator.types import TopicPartition

fields_given(OffsetKey, "group", "topic", "partition")
fields_given(OffsetsRecord, "key", "value", "producer_id", "producer_epoch")


def offset_record(
    group_id: str,
    tp: TopicPartition,
    offset: OffsetValue,
    producer_id: int = NO_PRODUCER_ID,
    producer_epoch: int = NO_PRODUCER_EPOCH,
) -> OffsetsRecord:
    """A commit; with a producer, one made inside that producer's transaction."""
    # The NamedTuples made without their Python __new__ (protocol.tuples): on every commit.
    key = new_tuple(OffsetKey, (group_id, tp.topic, tp.partition))
    return new_tuple(OffsetsRecord, (key, offset, producer_id, producer_epoch))


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
