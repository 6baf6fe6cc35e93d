"""A real full disk: the broker's data directory on a 4 MiB tmpfs, filled to the last page.
Produce is refused with KAFKA_STORAGE_ERROR (kafka-python's producer raises
KafkaStorageError), commits, leaves and a session expiry are answered NOT_COORDINATOR
while metadata and fetches are served, nothing that was refused is half there; once space
is back produce works again without a restart, and after a restart every acknowledged
record is there. Needs root (mount); elsewhere the storage seam tests (tests/storage/
test_faults.py, tests/shim/testbroker/test_storage_faults.py) cover the same paths.

A full tmpfs still takes a write that fits in a file's last, partly used page: commits
are repeated until one is refused, and the records a leave or an expiry writes are made
larger than what can be left of a page (a long protocol type)."""

from __future__ import annotations

import errno
import logging
import os
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.shim.config.broker_config import BrokerConfig
from kafka_shim.shim.server import BrokerThread
from tests.batches import read_records
from tests.helpers import fetch_from_start, subscription
from tests.wire import WireClient

PROTOCOL_TYPE = "consumer-" + "x" * 400  # group records larger than a page's slack
SESSION_MS = 1_000


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    mount = tmp_path / "disk"
    mount.mkdir()
    command = ["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", str(mount)]
    done = subprocess.run(command, capture_output=True, check=False)
    if done.returncode != 0:
        # CI runs as root and can mount; elsewhere this fails and says why, never skips.
        pytest.fail(
            f"cannot mount a tmpfs (run as root, as bash .ci/run does): {done.stderr.decode().strip()}"
        )
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def start(data_dir: Path) -> BrokerThread:
    config = BrokerConfig(
        port=0,
        data_dir=data_dir,
        offsets_topic_num_partitions=1,
        min_session_timeout_ms=SESSION_MS,
        fsync="always",
    )
    return BrokerThread(config).start()


def stop(broker: BrokerThread) -> None:
    broker.stop()
    broker.broker.close()


def members(broker: BrokerThread, group_id: str) -> list[str]:
    def listed() -> list[str]:  # on the broker's thread: the group changes between requests
        group = broker.broker.groups.group(group_id)
        return [] if group is None else list(group.members)

    return broker.call(listed)


def fill(directory: Path) -> Path:
    """A file grown until the file system refuses even one more byte."""
    filler = directory / "filler"
    with open(filler, "wb", buffering=0) as file:
        for chunk in (1 << 16, 1 << 12, 1):
            try:
                while True:
                    file.write(b"\0" * chunk)
            except OSError as exc:
                assert exc.errno == errno.ENOSPC
    return filler


def until(condition: Callable[[], bool], what: str, timeout_s: float = 10.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


def producer(bootstrap: str) -> Any:
    from kafka import KafkaProducer

    return KafkaProducer(
        bootstrap_servers=bootstrap, acks="all", retries=0, linger_ms=0, request_timeout_ms=5_000
    )


def join(client: WireClient, group: str, session_ms: int = 30_000) -> tuple[str, int]:
    body = {
        "group_id": group,
        "session_timeout_ms": session_ms,
        "rebalance_timeout_ms": 5_000,
        "member_id": "",
        "protocol_type": PROTOCOL_TYPE,
        "protocols": [{"name": "range", "metadata": subscription("t")}],
    }
    joined = client.request(11, 3, body)
    assert joined.error_code == 0
    identity = {"group_id": group, "generation_id": joined.generation_id, "member_id": joined.member_id}
    assignments = [{"member_id": joined.member_id, "assignment": b""}]
    synced = client.request(14, 3, {**identity, "assignments": assignments})
    assert synced.error_code == 0
    return joined.member_id, joined.generation_id


def commit(client: WireClient, member: tuple[str, int], offset: int) -> int:
    body = {
        "group_id": "g",
        "generation_id_or_member_epoch": member[1],
        "member_id": member[0],
        "topics": [{"name": "t", "partitions": [{"partition_index": 0, "committed_offset": offset}]}],
    }
    return int(client.request(8, 8, body).topics[0].partitions[0].error_code)


def fetch_all(bootstrap: str) -> list[bytes | None]:
    with WireClient(bootstrap) as client:
        partition = client.request(1, 11, fetch_from_start("t")).responses[0].partitions[0]
        assert partition.error_code == 0
        return [value for _, _, value in read_records(bytes(partition.records or b""))]


def test_a_full_disk_is_answered_and_survived(small_disk: Path, caplog: pytest.LogCaptureFixture) -> None:
    from kafka.errors import KafkaStorageError

    caplog.set_level(logging.WARNING, logger="kafka_shim.shim.broker")
    broker = start(small_disk)
    try:
        send = producer(broker.bootstrap)
        acknowledged: list[bytes | None] = [b"before-%d" % n for n in range(5)]
        for value in acknowledged:
            send.send("t", value).get(timeout=10)
        committer, leaver, expiring = (WireClient(broker.bootstrap) for _ in range(3))
        member = join(committer, "g")
        leaving = join(leaver, "leave")
        expires = join(expiring, "expire", SESSION_MS)
        assert commit(committer, member, 1) == 0

        filler = fill(small_disk)
        refused = None
        for number in range(10_000):  # what is left of the segment's last page, then nothing
            value = b"while-full-%d" % number + b"." * 512
            try:
                send.send("t", value).get(timeout=10)
            except KafkaStorageError as exc:
                refused = exc
                break
            acknowledged.append(value)
        assert refused is not None
        answers = [commit(committer, member, offset) for offset in range(2, 200)]
        assert ErrorCode.NOT_COORDINATOR in answers  # once the page's slack is used up
        last_committed = 1 + answers.index(ErrorCode.NOT_COORDINATOR)
        leave = {"group_id": "leave", "members": [{"member_id": leaving[0], "group_instance_id": None}]}
        assert leaver.request(13, 3, leave).error_code == ErrorCode.NOT_COORDINATOR
        # The expiring member stops heartbeating: its removal cannot be written, the broker goes on.
        expiring.close()
        until(lambda: "'expire'" in caplog.text, "the session expiry's write to fail")
        assert members(broker, "expire") == [expires[0]]
        with WireClient(broker.bootstrap) as client:
            assert client.request(3, 9, {"topics": [{"name": "t"}]}).topics[0].error_code == 0
        assert fetch_all(broker.bootstrap) == acknowledged
        fetched = broker.call(lambda: broker.broker.groups.fetch_offsets("g", None))
        assert [o.offset for o in fetched.values()] == [last_committed]

        filler.unlink()  # space is back
        send.send("t", b"after").get(timeout=10)
        acknowledged.append(b"after")
        until(lambda: not members(broker, "expire"), "the expiry to be written")
        assert commit(committer, member, 300) == 0
        send.close()
        committer.close()
        leaver.close()
    finally:
        stop(broker)
    again = start(small_disk)
    try:
        assert fetch_all(again.bootstrap) == acknowledged
        assert [o.offset for o in again.broker.groups.fetch_offsets("g", None).values()] == [300]
    finally:
        stop(again)
    assert not [p for p in os.listdir(small_disk) if p.endswith((".tmp", ".cleaned"))]
