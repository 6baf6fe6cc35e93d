"""Walking the batches of a segment file: rebuilding its indexes and
finding where valid data ends.

A failure at some position is a *torn tail* when no valid batch follows it
(a short write or a crash mid-write leaves nothing valid behind), and
*corruption in the middle* when a valid batch with a later offset does: then
acknowledged data would be lost by truncating, so recovery refuses unless told.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

from kafka_shim.protocol.records import (
    HEADER_SIZE,
    MAGIC,
    MAGIC_POSITION,
    BatchHeader,
    RecordsError,
    crc_of,
    read_header,
)

NO_TIMESTAMP = -1


class Searchable(Protocol):
    """bytes or mmap: indexable, sliceable, and `find` without copying."""

    def __len__(self) -> int: ...
    def __getitem__(self, index: int) -> int: ...
    def find(self, sub: bytes, start: int = ..., end: int = ...) -> int: ...


@dataclass(frozen=True)
class Damage:
    position: int
    reason: str
    in_middle: bool  # a valid, later batch follows the damaged one


@dataclass
class ScanResult:
    """What a walk from `start` found; index entries are relative to the base offset."""

    end: int  # the position after the last valid batch
    next_offset: int
    batches: int = 0
    max_timestamp: int = NO_TIMESTAMP
    offset_of_max_timestamp: int = -1
    offset_entries: list[tuple[int, int]] = field(default_factory=list)
    time_entries: list[tuple[int, int]] = field(default_factory=list)
    damage: Damage | None = None


def _checked_header(
    data: Searchable, position: int, expected_offset: int, verify_crc: bool
) -> tuple[BatchHeader | None, str | None]:
    """The header of the batch at `position` and why it is not a valid next batch
    (None if it is; the header is None when it cannot be read)."""
    try:
        header = read_header(data, position)  # type: ignore[arg-type]
    except RecordsError as exc:
        return None, str(exc)
    return header, _header_problem(data, header, expected_offset, verify_crc)


def _header_problem(
    data: Searchable, header: BatchHeader, expected_offset: int, verify_crc: bool
) -> str | None:
    if header.base_offset < expected_offset:
        return f"base offset {header.base_offset} goes back before {expected_offset}"
    if verify_crc and crc_of(data, header) != header.crc:  # type: ignore[arg-type]
        return f"CRC mismatch in the batch at offset {header.base_offset}"
    return None


def valid_batch_after(data: Searchable, position: int, expected_offset: int) -> bool:
    """Whether a CRC-valid batch with an offset >= `expected_offset` starts after `position`.

    Batch boundaries past a damaged length field are unknown, so every place
    a magic byte could sit is tried; `find` keeps the search in C.
    """
    magic = bytes([MAGIC])
    search = position + 1 + MAGIC_POSITION
    while True:
        found = data.find(magic, search)
        if found < 0:
            return False
        candidate = found - MAGIC_POSITION
        if (
            len(data) - candidate >= HEADER_SIZE
            and _checked_header(data, candidate, expected_offset, True)[1] is None
        ):
            return True
        search = found + 1


def scan(
    data: Searchable,
    *,
    start: int,
    base_offset: int,
    expected_offset: int,
    index_interval: int,
    verify_crc: bool = True,
) -> ScanResult:
    """Walk batches from `start` to the end of `data`, making index entries
    as appends do (see `storage.segment.Segment.append`)."""
    result = ScanResult(end=start, next_offset=expected_offset)
    position = start
    since_entry = index_interval  # index the first batch walked
    while position < len(data):
        header, problem = _checked_header(data, position, result.next_offset, verify_crc)
        if problem is not None:
            middle = valid_batch_after(data, position, result.next_offset)
            result.damage = Damage(position, problem, middle)
            break
        assert header is not None  # readable when there is no problem
        relative = header.last_offset - base_offset
        if header.max_timestamp > result.max_timestamp:
            result.max_timestamp = header.max_timestamp
            result.offset_of_max_timestamp = header.last_offset
        if since_entry >= index_interval:
            result.offset_entries.append((relative, position))
            if not result.time_entries or result.max_timestamp > result.time_entries[-1][0]:
                result.time_entries.append(
                    (result.max_timestamp, result.offset_of_max_timestamp - base_offset)
                )
            since_entry = 0
        since_entry += header.size
        position = header.end
        result.batches += 1
        result.next_offset = header.last_offset + 1
        result.end = position
    return result
