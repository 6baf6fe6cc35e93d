"""Replacing closed segments crash-safely (for compaction), like Kafka's
`.cleaned` / `.swap` files:

1. the new content is written to `<first>.<end>.cleaned` and fsynced, its indexes to
   `<first>.index.cleaned` and `<first>.timeindex.cleaned` (all outside the log's lock);
2. under the lock, it is renamed to `<first>.<end>.swap` (atomic): from here the
   replacement is decided and a restart finishes it;
3. the segments with base offsets in [first, end) are deleted and the swap
   file becomes `<first>.log`; the staged indexes take their names (a crash before that
   leaves the new segment without indexes, which start-up rebuilds from it); the
   directory is fsynced after the lock is released.

On start, `.cleaned` files are unfinished work (deleted) and `.swap` files are
finished. Indexes of the new segment are rebuilt by scanning it.
"""

from __future__ import annotations

import os
from pathlib import Path

from kafka_shim.storage import faults
from kafka_shim.storage.segment import INDEX_SUFFIX, LOG_SUFFIX, TIME_INDEX_SUFFIX, Segment, file_stem

CLEANED_SUFFIX = ".cleaned"
SWAP_SUFFIX = ".swap"


def fsync_directory(directory: Path) -> None:
    """Make renames, creations and deletions in `directory` durable."""
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


# The data directory and the small files written whole in it (credentials, ACLs, configs):
# the owner's alone, stricter than Kafka, which leaves them to the umask.
PRIVATE_DIR_MODE = 0o700
PRIVATE_FILE_MODE = 0o600


def write_atomically(directory: Path, name: str, text: str, mode: int = PRIVATE_FILE_MODE) -> None:
    """Write `directory/name` so that a crash leaves the old file or the new one, never a torn
    one. OSError (a full disk) leaves the old file and no temporary behind. The file is `mode`
    from its first byte whatever the umask: 0600, since these are the credentials, ACLs and
    configs (docs/storage.md)."""
    temporary = directory / (name + ".tmp")
    try:
        temporary.unlink(missing_ok=True)  # a leftover would keep its own mode
        descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
        os.fchmod(descriptor, mode)  # the umask may have taken bits away
        with open(descriptor, "w", encoding="utf-8") as file:
            faults.check(f"file:{name}")
            file.write(text)
            file.flush()
            faults.check("fsync")
            os.fsync(file.fileno())
        temporary.replace(directory / name)
    except OSError:
        temporary.unlink(missing_ok=True)
        raise
    fsync_directory(directory)


def _name(first: int, end: int, suffix: str) -> str:
    return f"{file_stem(first)}.{file_stem(end)}{suffix}"


class Replacement:
    """The compacted content of consecutive closed segments [first, end), written to its
    `.cleaned` file and scanned (CRC, indexes) while appends and reads go on: `install`,
    the only part under the log's lock, is a few renames and fsyncs of the directory."""

    def __init__(self, directory: Path, first: int, end: int, index_interval: int) -> None:
        self.directory = directory
        self.first = first
        self.end = end
        self.path = directory / _name(first, end, CLEANED_SUFFIX)
        self._index_interval = index_interval
        self._fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        self._staged: list[tuple[Path, Path]] = []

    def write(self, batches: bytes) -> None:
        faults.check("cleaned")
        view = memoryview(batches)
        while view:
            view = view[os.write(self._fd, view) :]

    def finish(self) -> Segment:
        """fsync the content, verify it (CRC, offsets ordered inside [first, end)) and stage
        its indexes beside it: the segment it becomes once installed. ValueError if the
        content is not whole valid batches in range."""
        faults.check("fsync")
        os.fsync(self._fd)
        os.close(self._fd)
        self._fd = -1
        result = Segment.scan_file(self.path, self.first, self._index_interval, self.first)
        if result.damage is not None or result.next_offset > self.end:
            raise ValueError(f"compacted batches must be whole and ordered inside [{self.first}, {self.end})")
        fresh = Segment(self.directory, self.first, self._index_interval)
        self._staged = fresh.stage_indexes(result, CLEANED_SUFFIX)
        return fresh

    def install(self, old_bases: list[int]) -> None:
        """Under the log's lock: the content replaces the segments at `old_bases` by renames
        and unlinks only. The caller fsyncs the directory once the lock is released (a
        directory fsync waits for the journal, which on a busy disk takes hundreds of ms):
        a journaling file system keeps these operations in order, so a power loss leaves a
        prefix of them, and each prefix is one `complete_swaps` finishes or drops."""
        swap = self.path.with_name(_name(self.first, self.end, SWAP_SUFFIX))
        self.path.replace(swap)
        _finish(self.directory, swap, self.first, old_bases)
        for staged, final in self._staged:  # derived data: a crash before this rebuilds them
            staged.replace(final)

    def discard(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1
        for path in (self.path, *(staged for staged, _ in self._staged)):
            path.unlink(missing_ok=True)


def _finish(directory: Path, swap: Path, first: int, old_bases: list[int]) -> None:
    for base in old_bases:
        for suffix in (LOG_SUFFIX, INDEX_SUFFIX, TIME_INDEX_SUFFIX):
            (directory / (file_stem(base) + suffix)).unlink(missing_ok=True)
    swap.replace(directory / (file_stem(first) + LOG_SUFFIX))


def complete_swaps(directory: Path) -> list[str]:
    """Drop unfinished replacements, finish decided ones (before segments are opened).
    Returns the directory's file names as they are then, for the rest of the opening."""
    # One listing, not a glob per suffix: a broker opening 100 topics does this for each.
    names = os.listdir(directory)
    changed = False
    for name in names:
        if name.endswith(CLEANED_SUFFIX):
            (directory / name).unlink()
            changed = True
    for swap in sorted(directory / name for name in names if name.endswith(SWAP_SUFFIX)):
        first_text, end_text = swap.name[: -len(SWAP_SUFFIX)].split(".")
        first, end = int(first_text), int(end_text)
        bases = [int(p.stem) for p in directory.glob("*" + LOG_SUFFIX) if p.stem.isdigit()]
        _finish(directory, swap, first, [b for b in bases if first <= b < end])
        fsync_directory(directory)
        changed = True
    return os.listdir(directory) if changed else names
