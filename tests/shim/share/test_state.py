"""What a share partition's state writes to __share_group_state (shim/share/state.py), as Kafka's
ShareCoordinatorShard.writeState: a snapshot first and every N updates, updates of what changed
between, nothing when nothing persisted changed, tombstones for both keys when it goes."""

from __future__ import annotations

import uuid

from kafka_shim.protocol.share_state_records import SharePartitionKey
from kafka_shim.shim.coordinator.share.partition import RecordState, SharePartition, StateBatch
from kafka_shim.shim.share.state import ShareStateShard

KEY = SharePartitionKey("g", uuid.UUID(int=1), 0)
NOW = 1_700_000_000_000
AVAILABLE, ARCHIVED = int(RecordState.AVAILABLE), int(RecordState.ARCHIVED)


def partition(*batches: StateBatch, start: int = 0) -> SharePartition:
    return SharePartition.restored(start, batches)


def kinds(shard: ShareStateShard, *states: SharePartition) -> list[str]:
    """The record each successive state writes: snapshot, update, or nothing."""
    written = []
    for state in states:
        records = shard.records([(KEY, state)], NOW)
        written.append("nothing" if not records else "update" if records[0].update else "snapshot")
    return written


def test_a_snapshot_first_then_updates_then_a_snapshot_every_n_updates() -> None:
    shard = ShareStateShard(updates_per_snapshot=2)
    states = [partition(StateBatch(0, n, AVAILABLE, 1)) for n in range(5)]
    assert kinds(shard, *states) == ["snapshot", "update", "update", "snapshot", "update"]


def test_an_unchanged_state_writes_nothing() -> None:
    shard = ShareStateShard(updates_per_snapshot=500)
    state = partition(StateBatch(0, 3, AVAILABLE, 1))
    assert kinds(shard, state, partition(StateBatch(0, 3, AVAILABLE, 1))) == ["snapshot", "nothing"]


def test_an_update_holds_only_the_offsets_that_changed_and_the_start_offset() -> None:
    shard = ShareStateShard(updates_per_snapshot=500)
    shard.records([(KEY, partition(StateBatch(0, 3, AVAILABLE, 1)))], NOW)
    (update,) = shard.records(
        [(KEY, partition(StateBatch(0, 1, AVAILABLE, 1), StateBatch(2, 3, ARCHIVED, 1)))], NOW
    )
    assert update.update and update.value is not None
    assert update.value["start_offset"] == 0
    assert update.value["state_batches"] == [StateBatch(2, 3, ARCHIVED, 1)._asdict()]


def test_a_fresh_start_and_a_reload_write_a_snapshot_or_an_update_as_kafka() -> None:
    shard = ShareStateShard(updates_per_snapshot=500)
    shard.records([(KEY, partition(StateBatch(0, 3, AVAILABLE, 1)))], NOW)
    shard.start_afresh(KEY)
    assert kinds(shard, partition(start=10)) == ["snapshot"]
    replayed = ShareStateShard(updates_per_snapshot=500)
    replayed.loaded(KEY, partition(start=10), snapshot_epoch=3, updates=0)
    (record,) = replayed.records([(KEY, partition(StateBatch(10, 10, AVAILABLE, 1), start=10))], NOW)
    assert record.update and record.value is not None and record.value["snapshot_epoch"] == 3


def test_what_was_written_is_put_back_with_the_records_not_written() -> None:
    shard = ShareStateShard(updates_per_snapshot=500)
    shard.records([(KEY, partition(StateBatch(0, 3, AVAILABLE, 1)))], NOW)
    kept = shard.kept(KEY)
    changed = partition(StateBatch(0, 3, ARCHIVED, 1))
    assert kinds(shard, changed) == ["update"]
    shard.put_back(KEY, kept)  # that update was not written: it is due again
    assert kinds(shard, changed) == ["update"]


def test_a_partition_that_goes_leaves_tombstones_for_both_keys() -> None:
    shard = ShareStateShard(updates_per_snapshot=500)
    shard.records([(KEY, partition(StateBatch(0, 3, AVAILABLE, 1)))], NOW)
    tombstones = shard.tombstones([KEY])
    assert [(t.key, t.value, t.update) for t in tombstones] == [(KEY, None, False), (KEY, None, True)]
    assert kinds(shard, partition()) == ["snapshot"]  # written afresh if it comes back
