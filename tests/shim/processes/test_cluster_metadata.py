"""The cluster's metadata shared by broker processes (shim.processes.cluster_metadata), on real
files: two brokers with their own data directories and the first's as the metadata directory,
as two processes have them; each change made through one under its lock is followed by the
other, and changes made at once through both are all kept."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import trio

from kafka_shim.protocol.messages.update_features import SAFE_DOWNGRADE
from kafka_shim.protocol.settings.security import STANDARD_AUTHORIZER
from kafka_shim.shim.broker import Broker
from kafka_shim.shim.cli.main import build_parser, config_from_args
from kafka_shim.shim.processes.cluster_metadata import RACY_NS, ClusterMetadata, KeptFile, broker_metadata
from kafka_shim.shim.quotas.client_quotas import CLIENT_ID, PRODUCER_BYTE_RATE
from kafka_shim.shim.security.authorizer import (
    AclBinding,
    AclOperation,
    PatternType,
    PermissionType,
    ResourceType,
)
from kafka_shim.shim.security.scram_store import ScramCredential, ScramMechanism
from kafka_shim.storage.data_dir import ACLS_FILE

Pair = tuple[tuple[Broker, ClusterMetadata], tuple[Broker, ClusterMetadata]]


def deny(principal: str) -> AclBinding:
    return AclBinding(
        ResourceType.TOPIC,
        "t",
        PatternType.LITERAL,
        principal,
        "*",
        AclOperation.READ,
        PermissionType.DENY,
    )


@pytest.fixture
def pair(tmp_path: Path) -> Iterator[Pair]:
    """Broker 0 (the controller) and broker 1, both keeping the metadata in broker 0's directory."""
    made = []
    for position in (0, 1):
        argv = ["--data-dir", str(tmp_path / f"broker-{position}"), "--config", f"node.id={position}"]
        argv += ["--config", f"authorizer.class.name={STANDARD_AUTHORIZER}"]
        argv += ["--config", "delegation.token.secret.key=k"]
        broker = Broker(config_from_args(build_parser().parse_args(argv)), metadata_dir=tmp_path / "broker-0")
        made.append((broker, broker_metadata(broker)))
    try:
        yield made[0], made[1]
    finally:
        for broker, metadata in made:
            metadata.close()
            broker.close()


def test_each_change_through_one_is_followed_by_the_other(pair: Pair) -> None:
    (one, one_meta), (other, other_meta) = pair
    assert one.authorizer is not None and other.authorizer is not None
    credential = ScramCredential(b"salt", b"stored", b"server", 4096)
    now = int(time.time() * 1000)

    async def through_one() -> None:
        async with one_meta.change():
            one.authorizer.create([deny("User:a")])  # type: ignore[union-attr]
        async with one_meta.change():
            one.client_quotas.store.alter([([(CLIENT_ID, "c")], [(PRODUCER_BYTE_RATE, 10.0)])], False)
        async with one_meta.change():
            one.credentials.alter([("alice", ScramMechanism.SCRAM_SHA_256, credential)], [])
        async with one_meta.change():
            one.delegation_tokens.create("User:a", "User:a", [], 0, now)
        async with one_meta.change():
            assert one.features.update({"transaction.version": (1, SAFE_DOWNGRADE)}, False) is None

    trio.run(through_one)
    other_meta.sync()
    assert other.authorizer.acls == [deny("User:a")]
    assert other.client_quotas.store.quota_for("", "c", PRODUCER_BYTE_RATE) is not None
    assert other.credentials.get("alice", ScramMechanism.SCRAM_SHA_256) == credential
    assert [t.token_id for t in other.delegation_tokens.tokens(now)] == [
        t.token_id for t in one.delegation_tokens.tokens(now)
    ]
    assert other.features.level("transaction.version") == 1
    # Both report the levels at one epoch: the file's time.
    assert other.features.epoch == one.features.epoch
    # Only the metadata directory holds them.
    assert not list((other.storage.data_dir.path).glob("*.json"))  # type: ignore[union-attr]


def test_changes_made_at_once_through_both_are_all_kept(pair: Pair) -> None:
    (one, one_meta), (other, other_meta) = pair

    async def create(broker: Broker, metadata: ClusterMetadata, name: str) -> None:
        for n in range(10):
            async with metadata.change():
                await trio.sleep(0.001)  # the other waits for the lock meanwhile
                broker.authorizer.create([deny(f"User:{name}-{n}")])  # type: ignore[union-attr]

    async def both() -> None:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(create, one, one_meta, "one")
            nursery.start_soon(create, other, other_meta, "other")

    trio.run(both)
    one_meta.sync()
    other_meta.sync()
    wanted = {deny(f"User:{name}-{n}") for name in ("one", "other") for n in range(10)}
    assert one.authorizer is not None and other.authorizer is not None
    assert set(one.authorizer.acls) == set(other.authorizer.acls) == wanted


def test_a_change_waits_for_the_lock_another_holds(pair: Pair) -> None:
    (_, one_meta), (_, other_meta) = pair
    order: list[str] = []
    held = trio.Event()

    async def holder() -> None:
        async with one_meta.change():
            order.append("one holds")
            held.set()
            await trio.sleep(0.05)  # the waiter tries the lock meanwhile
            order.append("one leaves")

    async def waiter() -> None:
        await held.wait()
        async with other_meta.change():
            order.append("other holds")

    async def both() -> None:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(holder)
            nursery.start_soon(waiter)

    trio.run(both)
    assert order == ["one holds", "one leaves", "other holds"]


def test_a_file_rewritten_with_the_same_stat_is_followed_while_young(tmp_path: Path) -> None:
    """Same inode, size and mtime (a rename reusing the freed inode within a clock tick): while
    the mtime is younger than RACY_NS the bytes tell; once older, the stat alone does."""
    path = tmp_path / ACLS_FILE
    loads: list[bytes] = []
    metadata = ClusterMetadata(tmp_path, [KeptFile(ACLS_FILE, lambda: loads.append(path.read_bytes()))])
    try:
        path.write_bytes(b"first")
        metadata.sync()
        stat = os.stat(path)
        with open(path, "r+b") as file:  # the same inode, the same size
            file.write(b"other")
        os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
        metadata.sync()
        assert loads == [b"first", b"other"]
        old = time.time_ns() - 2 * RACY_NS
        os.utime(path, ns=(old, old))
        metadata.sync()  # seen anew (its mtime changed), now settled
        metadata.sync()
        assert loads == [b"first", b"other"]  # the same bytes are not loaded again
        with open(path, "r+b") as file:
            file.write(b"third")
        os.utime(path, ns=(old, old))
        metadata.sync()
        assert loads == [b"first", b"other"]  # settled: the stat alone decides
        metadata.sync(force=True)  # as under the lock: the bytes decide
        assert loads == [b"first", b"other", b"third"]
    finally:
        metadata.close()


def test_a_file_that_cannot_be_loaded_is_logged_and_tried_again_once_changed(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / ACLS_FILE
    loaded: list[bytes] = []

    def load() -> None:
        content = path.read_bytes()
        if content == b"bad":
            raise ValueError("unreadable")
        loaded.append(content)

    metadata = ClusterMetadata(tmp_path, [KeptFile(ACLS_FILE, load)])
    try:
        path.write_bytes(b"bad")
        metadata.sync()
        metadata.sync(force=True)
        assert [r.message for r in caplog.records].count(f"cannot follow {path}: unreadable") == 1
        path.write_bytes(b"good")
        metadata.sync()
        assert loaded == [b"good"]
    finally:
        metadata.close()
