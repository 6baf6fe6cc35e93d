"""After a clean shutdown a data directory's partition logs open on first use
(storage.unopened_log); after a crash every one is recovered before the store is used."""

from __future__ import annotations

import itertools
import threading
from pathlib import Path

import pytest

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.storage import unopened_log
from kafka_shim.storage.disk_log import DiskLog
from kafka_shim.storage.disk_store import DiskStore
from kafka_shim.storage.errors import StorageError
from kafka_shim.storage.unopened_log import UnopenedDiskLog
from tests.batches import batch, read_records
from tests.storage.logs import options

ACTIVE = "0" * 20 + ".log"


def open_store(path: Path) -> DiskStore:
    return DiskStore(path, options())


def values(log: DiskLog) -> list[bytes | None]:
    return [value for _, _, value in read_records(log.read(0, 1 << 20))]


def stored(path: Path, *contents: bytes) -> None:
    """A topic "t" with a partition per value, each holding that value, shut down cleanly."""
    store = open_store(path)
    topic = store.topics.create("t", len(contents))
    for log, value in zip(topic.partitions, contents, strict=True):
        log.append(batch(value))
    store.close()


def partitions(store: DiskStore) -> list[DiskLog]:
    topic = store.topics.get("t")
    assert topic is not None
    return [log for log in topic.partitions if isinstance(log, DiskLog)]


def test_after_a_clean_shutdown_a_log_opens_when_first_used(tmp_path: Path) -> None:
    stored(tmp_path, b"a", b"b")
    store = open_store(tmp_path)
    first, second = partitions(store)
    assert type(first) is UnopenedDiskLog and type(second) is UnopenedDiskLog
    assert values(first) == [b"a"]
    assert type(first) is DiskLog and type(second) is UnopenedDiskLog  # only what was used
    assert second.append(batch(b"c")).base_offset == 1  # a write opens it too, then appends
    store.close()
    again = open_store(tmp_path)
    assert [values(log) for log in partitions(again)] == [[b"a"], [b"b", b"c"]]
    again.close()


def test_a_log_never_used_closes_as_the_clean_shutdown_left_it(tmp_path: Path) -> None:
    stored(tmp_path, b"a")
    before = {p.name: p.read_bytes() for p in (tmp_path / "t-0").iterdir()}
    open_store(tmp_path).close()
    assert (tmp_path / ".clean-shutdown").exists()
    assert {p.name: p.read_bytes() for p in (tmp_path / "t-0").iterdir()} == before


def test_a_leader_epoch_is_read_without_opening_the_log(tmp_path: Path) -> None:
    """What Metadata asks of every partition: the leader-epoch checkpoint's last epoch."""
    store = open_store(tmp_path)
    moved = store.topics.create("t", 2).partitions[0]
    moved.append(batch(b"a"))
    moved.begin_leader_epoch(3)
    store.close()
    again = open_store(tmp_path)
    logs = partitions(again)
    assert [log.leader_epoch for log in logs] == [3, 0]
    assert all(type(log) is UnopenedDiskLog for log in logs)
    assert [log.log_end_offset for log in logs] == [1, 0]  # now opened: the same epochs
    assert [(type(log), log.leader_epoch) for log in logs] == [(DiskLog, 3), (DiskLog, 0)]
    again.close()


def test_a_deleted_topic_s_unused_partition_is_removed_unread(tmp_path: Path) -> None:
    stored(tmp_path, b"a")
    store = open_store(tmp_path)
    [log] = partitions(store)
    log.delete()
    assert type(log) is UnopenedDiskLog  # not read on its way out
    assert not (tmp_path / "t-0").exists()
    store.close()


def test_a_log_closed_or_deleted_unopened_refuses_its_use_as_a_closed_log_does(tmp_path: Path) -> None:
    """A request holding the log of a topic deleted meanwhile (and made again under its name)
    is refused, and does not open the new topic's files as its own."""
    stored(tmp_path, b"a", b"b")
    store = open_store(tmp_path)
    deleted, closed = partitions(store)
    deleted.delete()
    (tmp_path / "t-0").mkdir()  # the topic made again
    closed.close()
    for log in (deleted, closed):
        with pytest.raises(StorageError) as refused:
            log.read(0, 1 << 20)
        assert refused.value.code is ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
        assert type(log) is UnopenedDiskLog
    assert list((tmp_path / "t-0").iterdir()) == []
    store.close()


def test_logs_opened_on_first_use_are_kept_out_of_collections_by_the_thousand(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As a start that opens them does (storage.topics.keep_out_of_collections), counted in
    twos here instead of thousands."""
    stored(tmp_path, b"a", b"b", b"c", b"d", b"e")
    frozen: list[int] = []
    monkeypatch.setattr(unopened_log, "LOGS_PER_FREEZE", 2)
    monkeypatch.setattr(unopened_log, "_OPENED", itertools.count(1))
    monkeypatch.setattr(unopened_log, "keep_out_of_collections", lambda: frozen.append(len(frozen)))
    store = open_store(tmp_path)
    logs = partitions(store)
    for used, log in enumerate(logs, 1):
        assert log.log_end_offset == 1
        assert log.log_end_offset == 1  # opened once, counted once
        assert len(frozen) == used // 2
    store.close()


def test_after_a_crash_every_log_is_recovered_before_the_store_is_used(tmp_path: Path) -> None:
    store = open_store(tmp_path)
    log = store.topics.create("t", 1).partitions[0]
    log.append(batch(b"a"))
    store.data_dir.unlock()  # killed: no clean shutdown
    active = tmp_path / "t-0" / ACTIVE
    whole = active.stat().st_size
    with active.open("ab") as torn:
        torn.write(batch(b"torn").data[:20])
    again = open_store(tmp_path)
    assert active.stat().st_size == whole  # cut before anything asked for the log
    [recovered] = partitions(again)
    assert type(recovered) is DiskLog
    assert values(recovered) == [b"a"]
    again.close()


def test_a_config_given_before_the_opening_is_the_one_the_log_runs_by(tmp_path: Path) -> None:
    stored(tmp_path, b"a")
    store = open_store(tmp_path)
    store.topics.set_configs("t", {"segment.bytes": "1000"})
    [log] = partitions(store)
    assert type(log) is UnopenedDiskLog
    assert log.config.segment_bytes == 1000
    assert log.log_end_offset == 1
    assert (type(log), log.config.segment_bytes) == (DiskLog, 1000)
    store.close()


def test_two_threads_using_an_unopened_log_open_it_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    stored(tmp_path, b"a")
    store = open_store(tmp_path)
    [log] = partitions(store)
    opened: list[Path] = []
    real_open = DiskLog.open
    # The first thread opens only once the second has come for the log too (at the opening's
    # lock, where it waits), so that both are inside at once whatever the scheduler does.
    arrived = threading.Semaphore(0)
    assert isinstance(log, UnopenedDiskLog)
    lock = log._opening

    class Watched:
        def __enter__(self) -> None:
            arrived.release()
            lock.acquire()

        def __exit__(self, *exc: object) -> None:
            lock.release()

    object.__setattr__(log, "_opening", Watched())

    def counted(directory: Path, *args: object, **kwargs: object) -> DiskLog:
        opened.append(directory)
        assert arrived.acquire(timeout=10) and arrived.acquire(timeout=10), "both threads came"
        return real_open(directory, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(DiskLog, "open", counted)
    ends: list[int] = []

    def use() -> None:
        ends.append(log.log_end_offset)

    threads = [threading.Thread(target=use) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=10)
    assert (ends, opened) == ([1, 1], [tmp_path / "t-0"])
    store.close()


def test_a_log_damaged_since_the_clean_shutdown_answers_a_storage_error(tmp_path: Path) -> None:
    store = open_store(tmp_path)
    log = store.topics.create("t", 1).partitions[0]
    for value in (b"a", b"b", b"c"):
        log.append(batch(value))
    store.close()
    (tmp_path / "t-0" / ("0" * 20 + ".index")).unlink()  # so the opening verifies the data
    active = tmp_path / "t-0" / ACTIVE
    data = bytearray(active.read_bytes())
    data[len(batch(b"a").data) + 40] ^= 1
    active.write_bytes(bytes(data))
    again = open_store(tmp_path)  # starts: the damage is found when the log is first used
    [damaged] = partitions(again)
    for _ in range(2):  # and again at the next use
        with pytest.raises(StorageError) as refused:
            damaged.read(0, 1 << 20)
        assert refused.value.code is ErrorCode.KAFKA_STORAGE_ERROR
        assert f"corrupt record batch in {active}" in str(refused.value)
    again.close()
