"""A partition log on disk that opens on first use, for a start after a clean shutdown.

Opening a partition (its indexes, producer snapshot and tail, storage.disk_log.DiskLog.open)
cost a broker with 100 topics on disk ~11 ms of CPU before its Kafka listener answered, and
one with 1,000 topics ten times that, mostly for partitions no client touches early. After a
clean shutdown nothing needs recovering, so each log starts as an `UnopenedDiskLog` and is
opened by DiskLog.open, exactly as at start, the first time anything but its directory or
config is asked of it, by whichever thread asks first (a request, the housekeeping thread's
retention pass). It then *is* a DiskLog: its class is swapped, so requests pay nothing after.

After an unclean shutdown every log is opened and recovered before the listener answers, as
before (storage.disk_store): a torn tail is cut off before any read or write, and a corrupt
log stops the start. What changes is only a log found corrupt after a *clean* shutdown (its
index lost and its data damaged since): it answers KAFKA_STORAGE_ERROR naming the file, as
Kafka's offline log directory does, instead of stopping the start.
"""

from __future__ import annotations

import itertools
import logging
import os
import threading
from pathlib import Path
from typing import Any

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.storage import disk_log, log_recovery
from kafka_shim.storage.disk_log import DiskLog
from kafka_shim.storage.durability import DiskOptions
from kafka_shim.storage.errors import StorageError, StorageStartupError
from kafka_shim.storage.log import LEADER_EPOCH, AppendHook
from kafka_shim.storage.log_config import LogConfig
from kafka_shim.storage.topics import LOGS_PER_FREEZE, keep_out_of_collections

log = logging.getLogger("kafka_shim.storage")

# Logs opened on first use, counted as a start counts those it opens: every LOGS_PER_FREEZE of
# them, what lives is moved out of the collector's walks (storage.topics.keep_out_of_collections),
# or a retention pass opening 30,000 would bring back the collections that stalled clients.
_OPENED = itertools.count(1)

# What an unopened log answers without opening: what it was made with and its own methods.
# configure, flush, close, delete and leader_epoch are its own: a new config is kept for the
# opening, a log not written since the clean shutdown has nothing to flush and is closed as
# that shutdown left it, a deleted topic's is removed unread, and the epoch is in one file.
# Closed or deleted unopened (`_closed`), it is never opened: its use is refused as a closed
# DiskLog refuses it, not met with another log's files (a topic made again under its name).
_WITHOUT_OPENING = frozenset(
    {
        "__class__",
        "__dict__",
        "directory",
        "config",
        "options",
        "_on_append",
        "_opening",
        "_open",
        "configure",
        "flush",
        "close",
        "delete",
        "leader_epoch",
        "_epoch_read",
        "_closed",
    }
)


class UnopenedDiskLog(DiskLog):
    def __init__(
        self, directory: Path, config: LogConfig, options: DiskOptions, on_append: AppendHook
    ) -> None:
        # No DiskLog.__init__: its state is what opening reads from the directory.
        for name, value in (
            ("directory", directory),
            ("config", config),
            ("options", options),
            ("_on_append", on_append),
            ("_opening", threading.Lock()),
            ("_epoch_read", None),
            ("_closed", False),
        ):
            object.__setattr__(self, name, value)

    def __getattribute__(self, name: str) -> Any:
        if name not in _WITHOUT_OPENING:
            object.__getattribute__(self, "_open")()
        return object.__getattribute__(self, name)

    def __setattr__(self, name: str, value: Any) -> None:
        if name not in _WITHOUT_OPENING:
            self._open()  # what is set must not be overwritten by the opening
        object.__setattr__(self, name, value)

    def _open(self) -> None:
        """Become the DiskLog this directory holds (once: a thread that waited finds it done).
        StorageError(KAFKA_STORAGE_ERROR) if it cannot be opened; the next use tries again.
        Closed or deleted meanwhile: refused as DiskLog._check_open refuses a closed log."""
        with self._opening:
            if type(self) is not UnopenedDiskLog:
                return
            DiskLog._check_open(self)
            try:
                opened = DiskLog.open(
                    self.directory, self.config, self.options, clean=True, on_append=self._on_append
                )
            except (OSError, StorageStartupError) as exc:
                log.error("cannot open %s: %s", self.directory, exc)
                raise StorageError(
                    ErrorCode.KAFKA_STORAGE_ERROR, f"cannot open {self.directory}: {exc}"
                ) from exc
            self.__dict__.update(opened.__dict__)
            self.__class__ = DiskLog  # type: ignore[assignment]
        if next(_OPENED) % LOGS_PER_FREEZE == 0:
            keep_out_of_collections()

    # A caller may hold one of these bound methods while another thread opens the log: each
    # decides under the opening's lock whether the log is open by then.

    def configure(self, config: LogConfig) -> None:
        with self._opening:
            if type(self) is UnopenedDiskLog:
                object.__setattr__(self, "config", config)
                return
        DiskLog.configure(self, config)

    def flush(self) -> None:
        with self._opening:
            if type(self) is UnopenedDiskLog:
                return
        DiskLog.flush(self)

    def delete(self) -> None:
        """Removed without reading it first: a deleted topic's partition that nobody used."""
        with self._opening:
            if type(self) is UnopenedDiskLog:
                disk_log.remove(self)
                return
        DiskLog.delete(self)

    @property
    def leader_epoch(self) -> int:
        """Every partition's epoch is in a Metadata answer: read from the leader-epoch checkpoint
        alone, so a client listing every topic opens none. (The file changes only through
        begin_leader_epoch, which opens the log first; after a clean stop no epoch starts past
        the log end, the entries opening would drop.)"""
        with self._opening:
            if type(self) is UnopenedDiskLog:
                if self._epoch_read is None:
                    epochs = log_recovery.read_epochs(self.directory, os.listdir(self.directory))
                    object.__setattr__(self, "_epoch_read", epochs[-1][0] if epochs else LEADER_EPOCH)
                return self._epoch_read
        return DiskLog.leader_epoch.fget(self)  # type: ignore[attr-defined]

    def close(self) -> bool:
        with self._opening:
            if type(self) is UnopenedDiskLog:
                self._closed = True
                return True
        return DiskLog.close(self)
