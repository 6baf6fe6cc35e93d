"""A data directory across restarts: topics, ids, partition counts, configs
and records come back; a second broker on the same directory is refused."""

from __future__ import annotations

import gc
from pathlib import Path

import pytest

from kafka_shim.storage import disk_store
from kafka_shim.storage.disk_log import DiskLog
from kafka_shim.storage.disk_store import DiskStore
from kafka_shim.storage.errors import CorruptLog, DataDirInUse
from tests.batches import batch, read_records
from tests.storage.logs import options


def open_store(path: Path, **kwargs: object) -> DiskStore:
    return DiskStore(path, options(), **kwargs)  # type: ignore[arg-type]


def test_a_second_store_on_the_same_directory_is_refused(tmp_path: Path) -> None:
    first = open_store(tmp_path)
    with pytest.raises(DataDirInUse, match=f"data directory {tmp_path} is in use by another kafka-shim"):
        open_store(tmp_path)
    first.close()
    open_store(tmp_path).close()  # released on close


@pytest.mark.parametrize("clean", [True, False])
def test_topics_configs_and_records_survive_a_restart(tmp_path: Path, clean: bool) -> None:
    store = open_store(tmp_path)
    orders = store.topics.create("orders", 3, {"retention.ms": "60000", "cleanup.policy": None})
    store.topics.create("gone", 1)
    store.topics.delete("gone")
    store.topics.add_partitions("orders", 4)
    store.topics.set_configs("orders", {"retention.ms": "60000", "segment.bytes": "1000"})
    for partition in range(4):
        orders.partitions[partition].append(batch(f"p{partition}".encode()))
    if clean:
        store.close()
    else:
        store.data_dir.unlock()  # what the kernel does when the process is killed

    again = open_store(tmp_path)
    topic = again.topics.get("orders")
    assert topic is not None and again.topics.get("gone") is None
    assert (topic.topic_id, len(topic.partitions)) == (orders.topic_id, 4)
    assert topic.configs == {"retention.ms": "60000", "segment.bytes": "1000"}
    assert topic.partitions[0].config.segment_bytes == 1000
    for partition, log in enumerate(topic.partitions):
        assert [v for _, _, v in read_records(log.read(0, 1 << 20))] == [f"p{partition}".encode()]
    assert not (tmp_path / "gone-0").exists()
    again.close()


def test_a_corrupt_log_stops_the_store_and_releases_the_lock(tmp_path: Path) -> None:
    store = open_store(tmp_path)
    log = store.topics.create("t", 1).partitions[0]
    assert isinstance(log, DiskLog)
    for value in (b"a", b"b", b"c"):
        log.append(batch(value))
    store.data_dir.unlock()
    segment = tmp_path / "t-0" / ("0" * 20 + ".log")
    data = bytearray(segment.read_bytes())
    data[len(batch(b"a").data) + 40] ^= 1
    segment.write_bytes(bytes(data))
    with pytest.raises(CorruptLog):
        open_store(tmp_path)
    DiskStore(tmp_path, options(truncate_corrupt=True)).close()  # the lock was released


def test_the_cluster_id_survives_a_restart_and_is_kafka_shaped(tmp_path: Path) -> None:
    from kafka_shim.shim.broker import Broker
    from kafka_shim.shim.config.broker_config import BrokerConfig

    config = BrokerConfig(data_dir=tmp_path / "data")
    first = Broker(config)
    first_id = first.cluster_id
    first.close()
    second = Broker(config)
    try:
        assert second.cluster_id == first_id
        assert len(first_id) == 22  # a UUID in unpadded URL-safe base64, as Kafka writes it
        assert (tmp_path / "data" / "meta.properties").read_text() == f"cluster.id={first_id}\n"
    finally:
        second.close()
    assert Broker(BrokerConfig(data_dir=None)).cluster_id != first_id


def test_replicas_of_added_partitions_survive_a_restart(tmp_path: Path) -> None:
    store = open_store(tmp_path)
    store.topics.create("orders", 2, assignment=[[0], [1]])
    store.topics.add_partitions("orders", 3, [[2]])
    store.close()
    reopened = open_store(tmp_path)
    topic = reopened.topics.get("orders")
    assert topic is not None and topic.replicas == [[0], [1], [2]]
    reopened.close()


@pytest.mark.parametrize(("collecting", "freezes"), [(True, 1), (False, 0)])
def test_a_start_with_many_partitions_freezes_them_unless_the_collector_is_paused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, collecting: bool, freezes: int
) -> None:
    """Counted in twos instead of thousands. A paused collector (`python -m kafka_shim` pauses
    it until its listener is bound, then freezes everything) is left to whoever paused it."""
    store = open_store(tmp_path)
    store.topics.create("t", 2)
    store.close()
    frozen: list[int] = []
    monkeypatch.setattr(disk_store, "LOGS_PER_FREEZE", 2)
    monkeypatch.setattr(disk_store, "keep_out_of_collections", lambda: frozen.append(1))
    was_enabled = gc.isenabled()
    if not collecting:
        gc.disable()
    try:
        open_store(tmp_path).close()
    finally:
        if was_enabled:
            gc.enable()
    assert len(frozen) == freezes
