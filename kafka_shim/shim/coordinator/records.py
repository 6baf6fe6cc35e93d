"""The coordinator's state as offsets-log records, and back (Kafka's
GroupMetadataManager serialisation, minus the bytes: `protocol.offsets_records`
owns those).

Emitting: every offset stored or removed (inside a transaction: as that
producer's), and the group's metadata after a completed rebalance, when it goes
Empty, and a tombstone when it dies.
Replaying: the last record of every key rebuilds every group as Kafka's coordinator
loads it after a failover or restart: a group recorded with members comes back Stable at
its generation with them, their assignments and the leader (the coordinator then gives
each a session from the load, so they carry on without rejoining); one recorded without
members comes back Empty; committed offsets intact.
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
from kafka_shim.protocol.records import NO_PRODUCER_EPOCH, NO_PRODUCER_ID
from kafka_shim.shim.coordinator.group import Group
from kafka_shim.shim.coordinator.member import Member
from kafka_shim.shim.coordinator.transactional import TransactionalOffsets
from kafka_shim.shim.coordinator.types import Protocol, TopicPartition


def offset_record(
    group_id: str,
    tp: TopicPartition,
    offset: OffsetValue,
    producer_id: int = NO_PRODUCER_ID,
    producer_epoch: int = NO_PRODUCER_EPOCH,
) -> OffsetsRecord:
    """A commit; with a producer, one made inside that producer's transaction."""
    return OffsetsRecord(OffsetKey(group_id, tp.topic, tp.partition), offset, producer_id, producer_epoch)


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


def replay(records: Iterable[OffsetsRecord], now: int, pending: TransactionalOffsets) -> dict[str, Group]:
    """The groups the records describe: the last record of each key wins and the
    order across keys does not matter (as in Kafka's loader, and as after compaction).

    Transactional records are offsets of transactions not completed in the log
    (`OffsetsLog.replay` has applied those that were): they go to `pending`. For
    them order matters, so the records come in log order: a plain record of the same
    partition after a pending one supersedes it. A group exists if it has live
    metadata, any live offset or any pending one."""
    metadata: dict[str, GroupValue | None] = {}
    committed: dict[str, dict[TopicPartition, OffsetValue | None]] = {}
    transacting: dict[str, None] = {}  # groups with pending offsets, in order
    for record in records:
        key, value = record.key, record.value
        if isinstance(key, OffsetKey):
            tp = TopicPartition(key.topic, key.partition)
            offset = value if isinstance(value, OffsetValue) else None
            if not record.is_transactional:
                committed.setdefault(key.group, {})[tp] = offset
                if offset is None:  # as in Kafka's replay, a tombstone also drops pending offsets
                    pending.discard(key.group, [tp])
                else:
                    pending.supersede(key.group, tp)
            elif offset is not None:
                pending.add(record.producer_id, key.group, tp, offset)
                transacting.setdefault(key.group, None)
        else:
            metadata[key.group] = value if isinstance(value, GroupValue) else None
    groups: dict[str, Group] = {}
    for group_id in [*metadata, *committed, *transacting]:
        offsets = {tp: o for tp, o in committed.get(group_id, {}).items() if o is not None}
        value = metadata.get(group_id)
        if group_id in groups or (value is None and not offsets and group_id not in transacting):
            continue
        group = groups[group_id] = Group(group_id, now)
        group.offsets = offsets
        if value is not None:
            _restore(group, value, now)
    return groups


def _restore(group: Group, value: GroupValue, now: int) -> None:
    """The group as its last metadata record left it: Stable with its members, or Empty (since
    its recorded timestamp, or from now)."""
    recorded = value.current_state_timestamp
    since = recorded if recorded >= 0 else now
    if not value.members or value.protocol is None:
        group.restore_empty(
            value.generation, value.protocol_type or None, since if not value.members else now
        )
        return
    for m in value.members:
        member = Member(
            member_id=m.member_id,
            group_instance_id=m.group_instance_id,
            client_id=m.client_id,
            client_host=m.client_host,
            rebalance_timeout_ms=m.rebalance_timeout,
            session_timeout_ms=m.session_timeout,
            protocol_type=value.protocol_type,
            protocols=(Protocol(value.protocol, m.subscription),),
            assignment=m.assignment,
        )
        group.add(member, None)
    group.restore_stable(value.generation, value.protocol_type, value.protocol, value.leader, since)
