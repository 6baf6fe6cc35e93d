"""Record bytes left in their files, for Kafka's zero-copy fetch path.

A Fetch response may carry `FileRecords` where it would carry record bytes: the codec writes
their length prefix and keeps the object (the build returns `Spliced` parts instead of one
bytes object), and the server sends each file range with sendfile, so the records never pass
through Python. `bytes()` of either reads them, for a connection that cannot use sendfile.
"""

from __future__ import annotations

import os
from collections.abc import Iterable


def pread_all(fd: int, size: int, offset: int) -> bytes:
    data = os.pread(fd, size, offset)
    while len(data) < size:  # a short read only when the file is shorter than the range
        more = os.pread(fd, size - len(data), offset + len(data))
        if not more:
            raise OSError(f"file ended {size - len(data)} bytes before the range did")
        data += more
    return data


class FileRecords:
    """Ranges of files, in order: (descriptor, offset, size). The descriptors are this object's
    own (duplicates of the segments'), so a segment deleted or compacted meanwhile still has
    its bytes sent whole; they are closed with it."""

    __slots__ = ("ranges", "size")

    def __init__(self, ranges: Iterable[tuple[int, int, int]]) -> None:
        self.ranges = tuple(ranges)
        self.size = sum(size for _, _, size in self.ranges)

    def __len__(self) -> int:
        return self.size

    def __bytes__(self) -> bytes:
        return b"".join(pread_all(fd, size, offset) for fd, offset, size in self.ranges)

    def __repr__(self) -> str:
        return f"FileRecords({self.size} bytes in {len(self.ranges)} ranges)"

    def close(self) -> None:
        ranges, self.ranges = self.ranges, ()
        for fd, _, _ in ranges:
            os.close(fd)

    def __del__(self) -> None:
        self.close()


class Spliced:
    """A message built around FileRecords: bytes and FileRecords, in order."""

    __slots__ = ("parts", "size")

    def __init__(self, parts: Iterable[bytes | FileRecords]) -> None:
        merged: list[bytes | FileRecords] = []
        run: list[bytes] = []
        for part in parts:
            if isinstance(part, FileRecords):
                if run:
                    merged.append(b"".join(run))
                    run = []
                merged.append(part)
            else:
                run.append(part)
        if run:
            merged.append(b"".join(run))
        self.parts = merged
        self.size = sum(len(part) for part in merged)

    def __len__(self) -> int:
        return self.size

    def __bytes__(self) -> bytes:
        return b"".join(bytes(part) for part in self.parts)

    def prefixed(self, prefix: bytes) -> Spliced:
        return Spliced([prefix, *self.parts])
