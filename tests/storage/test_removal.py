"""Making and removing partitions in bulk (storage.topics' reserve/make/commit, storage.removal):
a new partition is a directory only, a deleted topic's files go on the removal thread while
its name stays taken, and directories no topic holds are removed at start."""

from __future__ import annotations

from pathlib import Path

import pytest

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.storage.disk_store import DiskStore
from kafka_shim.storage.durability import DiskOptions, FsyncPolicy
from kafka_shim.storage.errors import StorageError
from kafka_shim.storage.faults import FAULTS
from tests.batches import batch
from tests.helpers import FakeClock, wait_until


def open_store(path: Path) -> DiskStore:
    return DiskStore(path, DiskOptions(fsync=FsyncPolicy.ALWAYS, clock=FakeClock()))


def test_a_new_partition_is_a_directory_until_written_and_keeps_its_data(tmp_path: Path) -> None:
    store = open_store(tmp_path)
    try:
        topic = store.topics.create("t", 2)
        assert [list(p.iterdir()) for p in (tmp_path / "t-0", tmp_path / "t-1")] == [[], []]
        topic.partitions[1].append(batch(b"kept"))
        assert sorted(p.suffix for p in (tmp_path / "t-1").iterdir()) == [".index", ".log", ".timeindex"]
    finally:
        store.close()
    reopened = open_store(tmp_path)
    try:
        reopened_topic = reopened.topics.get("t")
        assert reopened_topic is not None
        assert [p.log_end_offset for p in reopened_topic.partitions] == [0, 1]
    finally:
        reopened.close()


def test_reserved_partitions_are_made_apart_and_recorded_at_commit(tmp_path: Path) -> None:
    store = open_store(tmp_path)
    topics = store.topics
    try:
        new = topics.reserve_topic("t", 3)
        with pytest.raises(StorageError) as taken:  # the name is taken from the reservation on
            topics.create("t", 1)
        assert taken.value.code == ErrorCode.TOPIC_ALREADY_EXISTS
        topics.make([new])
        assert topics.get("t") is None  # made, not yet seen
        topics.commit([new])
        assert topics.get("t") is new.topic and topics.partition_count == 3
        growth = topics.reserve_growth("t", 5)
        topics.make([growth])
        topics.delete("t")  # deleted while its new partitions were made: they are dropped
        topics.commit([growth])
        assert topics.get("t") is None and topics.partition_count == 0
    finally:
        store.close()


def test_a_deleted_topic_s_name_stays_taken_until_its_files_are_removed(tmp_path: Path) -> None:
    store = open_store(tmp_path)
    try:
        store.topics.create("t", 4)
        held = FAULTS.hold("remove", after=2)
        store.topics.delete("t")
        assert held.reached.wait(10)
        with pytest.raises(StorageError) as refused:
            store.topics.create("t", 1)
        assert refused.value.code == ErrorCode.TOPIC_ALREADY_EXISTS
        assert refused.value.message == "Topic 't' is marked for deletion."
        assert store.topics.auto_create("t") is None  # a client retries until it is free
        held.release()
        wait_until(store.remover.idle, "the files are removed", deadline_s=10)
        assert not any(tmp_path.glob("t-*"))
        assert len(store.topics.create("t", 1).partitions) == 1
    finally:
        FAULTS.clear()
        store.close()


def test_directories_no_topic_holds_are_removed_at_start(tmp_path: Path) -> None:
    store = open_store(tmp_path)
    store.topics.create("kept", 2)
    store.close()
    for leftover in ("gone-0", "gone-1", "kept-2"):  # a deleted topic, a growth never recorded
        (tmp_path / leftover).mkdir()
    reopened = open_store(tmp_path)
    try:
        wait_until(reopened.remover.idle, "the leftovers are removed", deadline_s=10)
        assert sorted(p.name for p in tmp_path.iterdir() if p.is_dir()) == ["kept-0", "kept-1"]
    finally:
        reopened.close()
