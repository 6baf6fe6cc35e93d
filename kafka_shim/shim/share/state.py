"""What each share partition's state writes to `__share_group_state`, as Kafka's
ShareCoordinatorShard.writeState decides it: a ShareSnapshot (the whole state, a new snapshot
epoch) for a share partition not written yet and after every
share.coordinator.snapshot.update.records.per.snapshot updates, a ShareUpdate (the start offset
and the state batches that changed) otherwise. Pure: it keeps what was last written of each
share partition and answers the records; the share partitions put them in their outcome."""

from __future__ import annotations

from collections.abc import Iterable
from typing import NamedTuple, TypeVar

from kafka_shim.protocol.share_state_records import SharePartitionKey, ShareStateRecord
from kafka_shim.shim.coordinator.share.partition import SharePartition, StateBatch
from kafka_shim.storage.log import LEADER_EPOCH

# What was last written of a share partition: its start offset and state batches.
Written = tuple[int, list[StateBatch]]


class KeptState(NamedTuple):
    """A share partition's written state and (snapshot epoch, updates since), to put back."""

    written: Written | None
    snapshot: tuple[int, int] | None


class ShareStateShard:
    def __init__(self, updates_per_snapshot: int) -> None:
        self.updates_per_snapshot = updates_per_snapshot
        self._written: dict[SharePartitionKey, Written] = {}
        # per share partition: its snapshot epoch and the ShareUpdates written since that snapshot
        self._snapshots: dict[SharePartitionKey, tuple[int, int]] = {}

    def loaded(
        self, key: SharePartitionKey, partition: SharePartition, snapshot_epoch: int, updates: int
    ) -> None:
        """A share partition replayed from its snapshot and the updates after it."""
        self._written[key] = (partition.start_offset, partition.state_batches())
        self._snapshots[key] = (snapshot_epoch, updates)

    def records(
        self, changed: Iterable[tuple[SharePartitionKey, SharePartition]], now: int
    ) -> list[ShareStateRecord]:
        """The record of each share partition whose persisted state differs from what was
        written (noted as written: the caller's undo puts `kept` back if it is not)."""
        records = []
        for key, partition in changed:
            state = (partition.start_offset, partition.state_batches())
            if self._written.get(key) != state:
                record, self._snapshots[key] = self._record(key, partition, state[1], now)
                self._written[key] = state
                records.append(record)
        return records

    def start_afresh(self, key: SharePartitionKey) -> None:
        """Its next record is a snapshot, not a delta on the old state (AlterShareGroupOffsets)."""
        self._written.pop(key, None)

    def tombstones(self, keys: Iterable[SharePartitionKey]) -> tuple[ShareStateRecord, ...]:
        """The share partitions go: the snapshot's key and the updates' key both tombstoned,
        for compaction."""
        gone = list(keys)
        for key in gone:
            self._written.pop(key, None)
            self._snapshots.pop(key, None)
        return tuple(ShareStateRecord(k, None, update) for k in gone for update in (False, True))

    def kept(self, key: SharePartitionKey) -> KeptState:
        return KeptState(self._written.get(key), self._snapshots.get(key))

    def put_back(self, key: SharePartitionKey, kept: KeptState) -> None:
        _put(self._written, key, kept.written)
        _put(self._snapshots, key, kept.snapshot)

    def _record(
        self, key: SharePartitionKey, partition: SharePartition, batches: list[StateBatch], now: int
    ) -> tuple[ShareStateRecord, tuple[int, int]]:
        """As ShareCoordinatorShard.writeState: a ShareSnapshot (the next snapshot epoch) for
        a share partition not written yet or after `updates_per_snapshot` updates; else a
        ShareUpdate of the batches at or past the start offset that differ from what was written
        (the start offset says what left), at the snapshot's epoch.
        The record, and the partition's (snapshot epoch, updates since it) after it."""
        written = self._written.get(key)
        epoch, updates = self._snapshots.get(key, (-1, 0))
        if written is None or updates >= self.updates_per_snapshot:
            return ShareStateRecord(key, _snapshot(partition, batches, epoch + 1, now)), (epoch + 1, 0)
        before = {o: (b.delivery_state, b.delivery_count) for b in written[1] for o in _offsets(b)}
        changed = [
            b._replace(first_offset=o, last_offset=o)
            for b in batches
            for o in _offsets(b)
            if before.get(o) != (b.delivery_state, b.delivery_count)
        ]
        update = {
            "snapshot_epoch": epoch,
            "leader_epoch": LEADER_EPOCH,
            "start_offset": partition.start_offset,
            "delivery_complete_count": partition.completed(),
            "state_batches": [b._asdict() for b in _runs(changed)],
        }
        return ShareStateRecord(key, update, update=True), (epoch, updates + 1)


K = TypeVar("K")
V = TypeVar("V")


def _put(mapping: dict[K, V], key: K, value: V | None) -> None:
    """`mapping[key]` is `value` again (None: absent again)."""
    if value is None:
        mapping.pop(key, None)
    else:
        mapping[key] = value


def _offsets(batch: StateBatch) -> range:
    return range(batch.first_offset, batch.last_offset + 1)


def _runs(batches: list[StateBatch]) -> list[StateBatch]:
    """Consecutive offsets in one state and count joined into one batch."""
    runs: list[StateBatch] = []
    for b in batches:
        last = runs[-1] if runs else None
        if (
            last is not None
            and last.last_offset == b.first_offset - 1
            and (last.delivery_state, last.delivery_count) == (b.delivery_state, b.delivery_count)
        ):
            runs[-1] = last._replace(last_offset=b.last_offset)
        else:
            runs.append(b)
    return runs


def _snapshot(
    partition: SharePartition, batches: list[StateBatch], epoch: int, now: int
) -> dict[str, object]:
    return {
        "snapshot_epoch": epoch,
        "state_epoch": 0,
        "leader_epoch": LEADER_EPOCH,
        "start_offset": partition.start_offset,
        "delivery_complete_count": partition.completed(),
        "create_timestamp": now,
        "write_timestamp": now,
        "state_batches": [b._asdict() for b in batches],
    }
