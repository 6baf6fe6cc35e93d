"""The cluster's metadata every broker process shares: ACLs, client quotas, SCRAM credentials,
delegation tokens and finalized feature levels.

Kafka keeps them in the controller's metadata log, which every broker follows. Here they are
the one-process broker's own files (storage.data_dir, shim.security, shim.quotas), kept in the
controller's data directory, which every process reads and writes:

- a change is made under an exclusive lock (flock of LOCK_FILE in that directory), on the
  files read afresh: read, modify, write atomically (a rename), so two changes made through
  two processes at once are both kept;
- each process follows the others' changes: a stat of each file every tick of the process
  (shim.processes.node) and before a request that reads it (a Describe*, ApiVersions' feature
  levels, a SASL login), never on a request's hot path: an authorization reads memory only.

A file is known by its inode, mtime and size. Rewritten twice within a tick of the file
system's clock, it may come back with the same three (the inode freed by one rename reused by
the next, the same size): while its mtime is younger than RACY_NS its bytes are compared as
well, and under the lock they always are.
"""

from __future__ import annotations

import fcntl
import logging
import os
import time
from collections.abc import AsyncIterator, Callable, Collection, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from pathlib import Path

import trio

from kafka_shim.shim.broker import Broker
from kafka_shim.shim.quotas.kept import read_kept_quotas
from kafka_shim.shim.security.delegation_tokens import TOKENS_FILE
from kafka_shim.shim.security.kept import read_kept_acls
from kafka_shim.shim.security.scram_store import CREDENTIALS_FILE
from kafka_shim.storage.data_dir import ACLS_FILE, FEATURES_FILE, QUOTAS_FILE
from kafka_shim.storage.swap import PRIVATE_FILE_MODE

log = logging.getLogger("kafka_shim.processes")

LOCK_FILE = ".cluster-metadata.lock"
RACY_NS = 2_000_000_000  # past any file system's timestamp granularity (1 s on the coarsest)
LOCK_POLL_S = 0.002  # how often a change waiting for another process's tries the lock again

Identity = tuple[int, int, int]  # inode, mtime in ns, size


@dataclass
class KeptFile:
    """One file of the metadata and how this process takes it into memory (`load` reads it)."""

    name: str
    load: Callable[[], None]
    seen: Identity | None = None
    settled: bool = False  # its mtime was older than RACY_NS when seen: the stat alone says
    content: bytes | None = None  # what was last loaded (None: no file)


class ClusterMetadata:
    def __init__(self, directory: Path, files: list[KeptFile]) -> None:
        self.directory = directory
        self._files = {file.name: file for file in files}
        # Each file's path, joined once: a tick's cost is its stats (pathlib's join cost 10x one).
        self._paths = {file.name: os.path.join(directory, file.name) for file in files}
        self._lock_fd = os.open(directory / LOCK_FILE, os.O_RDWR | os.O_CREAT, PRIVATE_FILE_MODE)
        # flock is held per open file, and this process has one: its own changes take turns here.
        self._changing = trio.Lock()

    def close(self) -> None:
        os.close(self._lock_fd)

    def sync(self, names: Collection[str] | None = None, force: bool = False) -> None:
        """Load what changed since last time of the files `names` (all by default): one stat
        each when nothing did. `force`: compare the bytes whatever the stat says."""
        files = self._files
        for file in files.values() if names is None else (files[name] for name in names if name in files):
            self._sync(file, force)

    def _sync(self, file: KeptFile, force: bool) -> None:
        path = self._paths[file.name]
        try:
            stat = os.stat(path)
        except FileNotFoundError:
            identity, mtime_ns = None, 0
        else:
            identity, mtime_ns = (stat.st_ino, stat.st_mtime_ns, stat.st_size), stat.st_mtime_ns
        if identity == file.seen and file.settled and not force:
            return
        try:
            with open(path, "rb") as kept:
                content: bytes | None = kept.read()
        except FileNotFoundError:
            content = None
        file.seen, file.settled = identity, time.time_ns() - mtime_ns > RACY_NS
        if content == file.content:
            return
        file.content = content  # a file that cannot be loaded is not tried again until it changes
        try:
            file.load()
        except (OSError, ValueError, KeyError, TypeError) as exc:
            log.error("cannot follow %s: %s", path, exc)

    @asynccontextmanager
    async def change(self) -> AsyncIterator[None]:
        """Hold the metadata for a change: the lock, and every file as the others left it. On
        leaving, the files are read once more: the writer takes its own change from the file as
        the others do (the feature levels' epoch is the file's time in every process)."""
        async with self._changing:
            while True:
                try:
                    fcntl.flock(self._lock_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:  # another process is changing: wait without blocking the loop
                    await trio.sleep(LOCK_POLL_S)
            with self._locked():
                yield

    @contextmanager
    def held(self) -> Iterator[None]:
        """`change` for a process that does not serve yet (the controller setting --user's
        credentials at start): blocks until the lock is free."""
        fcntl.flock(self._lock_fd, fcntl.LOCK_EX)
        with self._locked():
            yield

    @contextmanager
    def _locked(self) -> Iterator[None]:
        """With the lock taken: every file read afresh before the change and after it, then the
        lock let go."""
        try:
            self.sync(force=True)
            yield
        finally:
            try:
                self.sync(force=True)
            finally:
                fcntl.flock(self._lock_fd, fcntl.LOCK_UN)


def broker_metadata(broker: Broker) -> ClusterMetadata:
    """The metadata files of `broker` (opened on its metadata directory) and how each is taken
    into its memory."""
    directory = broker.metadata_dir
    assert directory is not None  # a broker process keeps its data on disk
    quotas = broker.client_quotas.store

    def features() -> None:
        kept = directory.read_features()
        epoch_ms = os.stat(directory.path / FEATURES_FILE).st_mtime_ns // 1_000_000
        broker.follow_features(kept, epoch_ms)

    files = [
        KeptFile(QUOTAS_FILE, lambda: quotas.replace(read_kept_quotas(directory))),
        KeptFile(CREDENTIALS_FILE, broker.credentials.reload),
        KeptFile(TOKENS_FILE, broker.delegation_tokens.reload),
        KeptFile(FEATURES_FILE, features),
    ]
    authorizer = broker.authorizer
    if authorizer is not None:
        files.append(KeptFile(ACLS_FILE, lambda: authorizer.replace(read_kept_acls(directory))))
    return ClusterMetadata(directory.path, files)
