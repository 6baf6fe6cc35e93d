"""The classic groups rebuilt from `__consumer_offsets`, as Kafka's coordinator loads them when
it takes over the partition after a failover or restart: one replay per record type (an
offset commit, plain or a transaction's; a group's metadata), then the groups they describe.

The last record of every key wins: a group recorded with members comes back Stable at its
generation with them, their assignments and the leader (the coordinator then gives each a
session from the load, so they carry on without rejoining); one recorded without members
comes back Empty; committed offsets intact.
"""

from __future__ import annotations

from collections.abc import Iterable

from kafka_shim.protocol.offsets_records import (
    GroupValue,
    OffsetKey,
    OffsetsRecord,
    OffsetValue,
    Value,
)
from kafka_shim.shim.coordinator.group import Group
from kafka_shim.shim.coordinator.member import Member
from kafka_shim.shim.coordinator.transactional import TransactionalOffsets
from kafka_shim.shim.coordinator.types import Protocol, TopicPartition


def replay(records: Iterable[OffsetsRecord], now: int, pending: TransactionalOffsets) -> dict[str, Group]:
    """The groups the records describe: the last record of each key wins and the
    order across keys does not matter (as in Kafka's loader, and as after compaction).

    Transactional records are offsets of transactions not completed in the log
    (`OffsetsLog.replay` has applied those that were): they go to `pending`. For
    them order matters, so the records come in log order: a plain record of the same
    partition after a pending one supersedes it. A group exists if it has live
    metadata, any live offset or any pending one."""
    log = OffsetsLogReplay(pending)
    for record in records:
        log.replay(record)
    return log.groups(now)


class OffsetsLogReplay:
    def __init__(self, pending: TransactionalOffsets) -> None:
        self._pending = pending
        self._metadata: dict[str, GroupValue | None] = {}
        self._committed: dict[str, dict[TopicPartition, OffsetValue | None]] = {}
        self._transacting: dict[str, None] = {}  # groups with pending offsets, in order

    def replay(self, record: OffsetsRecord) -> None:
        """Kafka's shard replays by the record's key type; so does this."""
        key = record.key
        if isinstance(key, OffsetKey):
            self._offset_commit(key, record)
        else:  # GroupKey: a group's metadata (the group service passes no KIP-848 records)
            self._group_metadata(key.group, record.value)

    def _offset_commit(self, key: OffsetKey, record: OffsetsRecord) -> None:
        tp = TopicPartition(key.topic, key.partition)
        offset = record.value if isinstance(record.value, OffsetValue) else None
        if not record.is_transactional:
            self._committed.setdefault(key.group, {})[tp] = offset
            if offset is None:  # as in Kafka's replay, a tombstone also drops pending offsets
                self._pending.discard(key.group, [tp])
            else:
                self._pending.supersede(key.group, tp)
        elif offset is not None:
            self._pending.add(record.producer_id, key.group, tp, offset)
            self._transacting.setdefault(key.group, None)

    def _group_metadata(self, group_id: str, value: Value | None) -> None:
        self._metadata[group_id] = value if isinstance(value, GroupValue) else None

    def groups(self, now: int) -> dict[str, Group]:
        """The groups the records replayed so far describe (groups with metadata first, in the
        order their records came, then those with only offsets)."""
        groups: dict[str, Group] = {}
        for group_id in [*self._metadata, *self._committed, *self._transacting]:
            offsets = {tp: o for tp, o in self._committed.get(group_id, {}).items() if o is not None}
            value = self._metadata.get(group_id)
            if group_id in groups or (value is None and not offsets and group_id not in self._transacting):
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
