"""Sparse per-segment indexes in Kafka's on-disk layout (big-endian):

- `.index`: 8-byte entries (offset relative to the segment base: int32,
  byte position of the batch in the .log: int32); the offset is the last
  offset of the indexed batch, as Kafka's LogSegment writes it.
- `.timeindex`: 12-byte entries (largest timestamp so far: int64, relative
  offset of the batch holding it: int32), written when that maximum rises.

An entry is written every `index.interval.bytes` of log. Both files are
derived data: an index that fails validation is rebuilt from the log.
Unlike Kafka the files are not preallocated; they grow by appends.
"""

from __future__ import annotations

import errno
import os
import struct
from array import array
from bisect import bisect_right
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path

from kafka_shim.storage import faults


@dataclass(frozen=True)
class IndexLayout:
    key_type: str  # array typecodes
    value_type: str

    @property
    def struct_format(self) -> str:
        return ">" + self.key_type + self.value_type

    @property
    def entry_size(self) -> int:
        return struct.calcsize(self.struct_format)


OFFSET_LAYOUT = IndexLayout("i", "i")  # relative offset -> position
TIME_LAYOUT = IndexLayout("q", "i")  # timestamp -> relative offset


class SparseIndex:
    """Monotonic (key, value) entries in memory, mirrored to an append-only file."""

    def __init__(self, path: Path, layout: IndexLayout) -> None:
        self.path = path
        self.layout = layout
        self.keys: array = array(layout.key_type)  # type: ignore[type-arg]
        self.values: array = array(layout.value_type)  # type: ignore[type-arg]
        self._fd: int | None = None

    def __len__(self) -> int:
        return len(self.keys)

    @property
    def last(self) -> tuple[int, int] | None:
        return (self.keys[-1], self.values[-1]) if self.keys else None

    def floor(self, key: int) -> tuple[int, int] | None:
        """The entry with the largest key <= `key`."""
        at = bisect_right(self.keys, key) - 1
        return (self.keys[at], self.values[at]) if at >= 0 else None

    def append(self, key: int, value: int) -> None:
        """To the file, then to memory: OSError leaves both as they were (a torn entry cut off)."""
        if self._fd is None:
            self._fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        try:
            faults.check("index")
            written = os.write(self._fd, self._entry(key, value))
            if written != self.layout.entry_size:
                raise OSError(errno.ENOSPC, f"short write to {self.path}")
        except OSError:
            self.truncate(len(self.keys))
            raise
        self.keys.append(key)
        self.values.append(value)

    def truncate(self, count: int) -> None:
        """Keep the first `count` entries only, in memory and in the file."""
        del self.keys[count:]
        del self.values[count:]
        if self.path.exists():
            os.truncate(self.path, count * self.layout.entry_size)

    def _entry(self, key: int, value: int) -> bytes:
        return struct.pack(self.layout.struct_format, key, value)

    def rewrite(self, entries: list[tuple[int, int]]) -> None:
        """Replace the whole index (after a rebuild)."""
        self.close()
        self.keys = array(self.layout.key_type, (k for k, _ in entries))
        self.values = array(self.layout.value_type, (v for _, v in entries))
        data = b"".join(self._entry(k, v) for k, v in entries)
        self.path.write_bytes(data)

    def load(self) -> bool:
        """Read the file; False (and nothing loaded) if it is missing or torn."""
        try:
            data = self.path.read_bytes()
        except FileNotFoundError:
            return False
        size = self.layout.entry_size
        if len(data) % size:
            return False
        pairs = struct.iter_unpack(self.layout.struct_format, data)
        keys = array(self.layout.key_type)
        values = array(self.layout.value_type)
        for key, value in pairs:
            keys.append(key)
            values.append(value)
        self.keys, self.values = keys, values
        return True

    def flush(self) -> None:
        if self._fd is not None:
            faults.check("fsync")
            os.fsync(self._fd)

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


def strictly_increasing(values: array) -> bool:  # type: ignore[type-arg]
    return all(a < b for a, b in pairwise(values))
