"""Aborted transactions of one segment: Kafka's `.txnindex` file.

One 34-byte big-endian entry per transaction aborted by a marker in the segment:
version int16 (0), producer id int64, first offset int64, last offset int64 (the
ABORT marker's), last stable offset int64 (the partition's LSO once that marker was
written). Fetch under read_committed returns the (producer id, first offset) of the
entries overlapping what it serves, so consumers drop those records.

Like the other indexes the file is appended with unbuffered writes and flushed when
the segment is sealed; after an unclean stop the entries are derived again from the
markers in the log (see `DiskLog.open`).
"""

from __future__ import annotations

import errno
import os
import struct
from collections.abc import Iterable
from pathlib import Path
from typing import NamedTuple

from kafka_shim.storage import faults

TXN_INDEX_SUFFIX = ".txnindex"
TXN_INDEX_VERSION = 0
_ENTRY = struct.Struct(">hqqqq")


class AbortedTxn(NamedTuple):
    producer_id: int
    first_offset: int
    last_offset: int
    last_stable_offset: int


def overlapping(entries: Iterable[AbortedTxn], start_offset: int, end_offset: int) -> list[AbortedTxn]:
    """The entries (in marker order) whose transaction overlaps [start_offset,
    end_offset), as Kafka's TransactionIndex.collectAbortedTxns chooses them. The walk
    stops at an entry whose LSO had passed `end_offset`: every transaction with data
    before it was complete by then, so no later marker can close one."""
    found = []
    for entry in entries:
        if entry.last_offset >= start_offset and entry.first_offset < end_offset:
            found.append(entry)
        if entry.last_stable_offset >= end_offset:
            break
    return found


def encode(entry: AbortedTxn) -> bytes:
    return _ENTRY.pack(TXN_INDEX_VERSION, *entry)


class TxnIndex:
    """The entries in memory, mirrored to an append-only file made on the first entry."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.entries: list[AbortedTxn] = []
        self._fd: int | None = None

    def load(self) -> bool:
        """Read the file (a missing one is empty); False if it is torn or not an index
        (nothing loaded: the caller derives the entries from the log instead)."""
        try:
            data = self.path.read_bytes()
        except FileNotFoundError:
            self.entries = []
            return True
        if len(data) % _ENTRY.size:
            return False
        entries = []
        for version, *fields in _ENTRY.iter_unpack(data):
            if version != TXN_INDEX_VERSION:
                return False
            entries.append(AbortedTxn(*fields))
        self.entries = entries
        return True

    def append(self, entry: AbortedTxn) -> None:
        """To the file, then to memory: OSError leaves both as they were (a torn entry cut off)."""
        if self._fd is None:
            self._fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        data = encode(entry)
        try:
            faults.check("txnindex")
            if os.write(self._fd, data) != len(data):
                raise OSError(errno.ENOSPC, f"short write to {self.path}")
        except OSError:
            os.ftruncate(self._fd, len(self.entries) * _ENTRY.size)
            raise
        self.entries.append(entry)

    def rewrite(self, entries: list[AbortedTxn]) -> None:
        """Replace the whole file (after the entries were derived again)."""
        self.close()
        self.entries = list(entries)
        if entries:
            self.path.write_bytes(b"".join(encode(e) for e in entries))
        else:
            self.path.unlink(missing_ok=True)

    def flush(self) -> None:
        if self._fd is not None:
            faults.check("fsync")
            os.fsync(self._fd)

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def delete(self) -> None:
        self.close()
        self.entries = []
        self.path.unlink(missing_ok=True)
