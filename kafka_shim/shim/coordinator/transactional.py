"""Offsets committed inside transactions that have not completed yet (Kafka's
pendingTransactionalOffsets and openTransactionsByGroup).

A TxnOffsetCommit parks its offsets here under its producer id; the transaction's
end moves them into the group's committed offsets (commit) or drops them (abort).
While a partition has a parked offset, OffsetFetch with require_stable answers
UNSTABLE_OFFSET_COMMIT for it, retention leaves its committed offset alone, and
the group is not buried.

When a transaction commits, an offset written to the log earlier than the
partition's committed offset does not replace it (Kafka compares the records'
log offsets). Records reach the log in the order the coordinator emits them, so
each parked offset is numbered in emission order, and one is marked superseded
when a later write of its partition is committed: a plain OffsetCommit, or
another producer's later offset whose transaction committed first.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import NamedTuple

from kafka_shim.protocol.offsets_records import OffsetValue
from kafka_shim.shim.coordinator.types import TopicPartition


class PendingOffset(NamedTuple):
    offset: OffsetValue
    serial: int  # emission order: the order of the records in the log
    superseded: bool = False


class TransactionalOffsets:
    def __init__(self) -> None:
        self._by_producer: dict[int, dict[str, dict[TopicPartition, PendingOffset]]] = {}
        self._producers_by_group: dict[str, set[int]] = {}
        self._serial = 0

    def copy(self) -> TransactionalOffsets:
        """An independent copy (its entries are immutable tuples), for an undo to put back."""
        copied = TransactionalOffsets()
        copied._by_producer = {
            producer_id: {group_id: dict(entries) for group_id, entries in groups.items()}
            for producer_id, groups in self._by_producer.items()
        }
        copied._producers_by_group = {group: set(ids) for group, ids in self._producers_by_group.items()}
        copied._serial = self._serial
        return copied

    def add(self, producer_id: int, group_id: str, tp: TopicPartition, offset: OffsetValue) -> None:
        """A transactional offset commit (a later one of the same producer replaces it)."""
        self._serial += 1
        groups = self._by_producer.setdefault(producer_id, {})
        groups.setdefault(group_id, {})[tp] = PendingOffset(offset, self._serial)
        self._producers_by_group.setdefault(group_id, set()).add(producer_id)

    def is_pending(self, group_id: str, tp: TopicPartition) -> bool:
        return any(tp in self._entries(producer_id, group_id) for producer_id in self._open(group_id))

    def has_open_transactions(self, group_id: str) -> bool:
        return group_id in self._producers_by_group

    def partitions(self, group_id: str) -> set[TopicPartition]:
        """Every partition of the group with a parked offset."""
        return {tp for producer_id in self._open(group_id) for tp in self._entries(producer_id, group_id)}

    def supersede(self, group_id: str, tp: TopicPartition, serial: int | None = None) -> None:
        """A write of `tp` committed after every parked offset (or, with `serial`, after
        those numbered below it): they no longer replace the committed offset."""
        for producer_id in self._open(group_id):
            entries = self._entries(producer_id, group_id)
            entry = entries.get(tp)
            if entry is not None and (serial is None or entry.serial < serial):
                entries[tp] = entry._replace(superseded=True)

    def discard(self, group_id: str, partitions: Iterable[TopicPartition]) -> set[TopicPartition]:
        """Drop the parked offsets of these partitions (their offsets were deleted);
        returns the partitions that had any. The transactions stay open."""
        wanted = set(partitions)
        dropped: set[TopicPartition] = set()
        for producer_id in self._open(group_id):
            entries = self._entries(producer_id, group_id)
            for tp in wanted & entries.keys():
                del entries[tp]
                dropped.add(tp)
        return dropped

    def complete(self, producer_id: int, commit: bool) -> dict[str, dict[TopicPartition, OffsetValue]]:
        """End the producer's transaction: what its commit makes visible, per group
        (nothing on abort)."""
        groups = self._by_producer.pop(producer_id, {})
        for group_id in groups:
            producers = self._producers_by_group[group_id]
            producers.discard(producer_id)
            if not producers:
                del self._producers_by_group[group_id]
        if not commit:
            return {}
        visible: dict[str, dict[TopicPartition, OffsetValue]] = {}
        for group_id, entries in groups.items():
            for tp, entry in entries.items():
                if not entry.superseded:
                    visible.setdefault(group_id, {})[tp] = entry.offset
                    self.supersede(group_id, tp, entry.serial)
        return visible

    def _open(self, group_id: str) -> Iterable[int]:
        return self._producers_by_group.get(group_id, ())

    def _entries(self, producer_id: int, group_id: str) -> dict[TopicPartition, PendingOffset]:
        return self._by_producer[producer_id].get(group_id, {})
