"""Replacing closed segments crash-safely (for compaction), like Kafka's
`.cleaned` / `.swap` files:

1. the new content is written to `<first>.<end>.cleaned` and fsynced;
2. it is renamed to `<first>.<end>.swap` (atomic): from here the replacement
   is decided and a restart finishes it;
3. the segments with base offsets in [first, end) are deleted and the swap
   file becomes `<first>.log`.

On start, `.cleaned` files are unfinished work (deleted) and `.swap` files are
finished. Indexes of the new segment are rebuilt by scanning it.
"""

from __future__ import annotations

import os
from pathlib import Path

from kafka_shim.storage import faults
from kafka_shim.storage.segment import INDEX_SUFFIX, LOG_SUFFIX, TIME_INDEX_SUFFIX, file_stem

CLEANED_SUFFIX = ".cleaned"
SWAP_SUFFIX = ".swap"


def fsync_directory(directory: Path) -> None:
    """Make renames, creations and deletions in `directory` durable."""
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_atomically(directory: Path, name: str, text: str) -> None:
    """Write `directory/name` so that a crash leaves the old file or the new one, never a torn
    one. OSError (a full disk) leaves the old file and no temporary behind."""
    temporary = directory / (name + ".tmp")
    try:
        with open(temporary, "w", encoding="utf-8") as file:
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


def replace_with(directory: Path, first: int, end: int, batches: bytes, old_bases: list[int]) -> None:
    cleaned = directory / _name(first, end, CLEANED_SUFFIX)
    with open(cleaned, "wb") as file:
        file.write(batches)
        file.flush()
        os.fsync(file.fileno())
    swap = cleaned.with_name(_name(first, end, SWAP_SUFFIX))
    cleaned.replace(swap)
    fsync_directory(directory)
    _finish(directory, swap, first, old_bases)


def _finish(directory: Path, swap: Path, first: int, old_bases: list[int]) -> None:
    for base in old_bases:
        for suffix in (LOG_SUFFIX, INDEX_SUFFIX, TIME_INDEX_SUFFIX):
            (directory / (file_stem(base) + suffix)).unlink(missing_ok=True)
    swap.replace(directory / (file_stem(first) + LOG_SUFFIX))
    fsync_directory(directory)


def complete_swaps(directory: Path) -> None:
    """Drop unfinished replacements, finish decided ones (before segments are opened)."""
    for cleaned in directory.glob("*" + CLEANED_SUFFIX):
        cleaned.unlink()
    for swap in sorted(directory.glob("*" + SWAP_SUFFIX)):
        first_text, end_text = swap.name[: -len(SWAP_SUFFIX)].split(".")
        first, end = int(first_text), int(end_text)
        bases = [int(p.stem) for p in directory.glob("*" + LOG_SUFFIX) if p.stem.isdigit()]
        _finish(directory, swap, first, [b for b in bases if first <= b < end])
