"""Opening a partition directory after a restart (storage.disk_log.DiskLog.open), and the
files the directory keeps beside its segments.

After a clean shutdown segments load from their indexes; otherwise the active segment is
verified batch by batch and a torn tail cut off. Producer state comes back from the snapshot
of the last roll or clean close, brought up to date from the batches written after it, which
also derives again the `.txnindex` entries of the aborted transactions whose markers came after
it; the `.txnindex` files a compaction left behind a crash join the segments now holding their
markers."""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Collection
from pathlib import Path

from kafka_shim.storage import segment_list
from kafka_shim.storage.durability import DiskOptions
from kafka_shim.storage.errors import CorruptLog
from kafka_shim.storage.log_config import LogConfig
from kafka_shim.storage.producer_state import ProducerStates
from kafka_shim.storage.scan import Damage
from kafka_shim.storage.segment import LOG_SUFFIX, Segment
from kafka_shim.storage.swap import write_atomically
from kafka_shim.storage.txn_index import TXN_INDEX_SUFFIX, AbortedTxn, TxnIndex

log = logging.getLogger("kafka_shim.storage")

# Where DeleteRecords moved the log start, when it moved it past the first segment's base.
LOG_START_FILE = "log-start-offset"
# Producers' last batches and open transactions, written at every roll and at a
# clean close (Kafka's .snapshot files).
PRODUCER_SNAPSHOT_FILE = "producer-state.json"
# The leader-epoch cache, in Kafka's own checkpoint format (version 0, a count, "epoch offset"
# lines), written when a leader epoch starts (shim.testbroker.cluster moves), read back at open.
LEADER_EPOCH_FILE = "leader-epoch-checkpoint"


def segment_bases(names: list[str]) -> list[int]:
    """The base offsets of the segments among a directory's file names, in order."""
    stems = (name[: -len(LOG_SUFFIX)] for name in names if name.endswith(LOG_SUFFIX))
    return sorted(int(stem) for stem in stems if stem.isdigit())


def load_segments(
    directory: Path, bases: list[int], config: LogConfig, options: DiskOptions, *, clean: bool
) -> list[Segment]:
    """The segments at `bases` (at least one), the last active. Closed segments were fsynced
    when rolled; the active one is verified unless the shutdown was clean, and so is every
    segment whose index is missing or unusable."""
    segments: list[Segment] = []
    expected = bases[0]
    for number, base in enumerate(bases):
        active = number == len(bases) - 1
        loaded = Segment.load(directory, base, config.index_interval_bytes) if clean or not active else None
        if loaded is None:
            loaded, damage = Segment.recover(directory, base, config.index_interval_bytes, expected)
            if damage is not None:
                _handle_damage(loaded, damage, options, later=bases[number + 1 :])
                segments.append(loaded)
                break
        segments.append(loaded)
        expected = loaded.next_offset
    return segments


def _handle_damage(segment: Segment, damage: Damage, options: DiskOptions, later: list[int]) -> None:
    """A torn tail of the active segment is cut off with one log line; damage
    with valid data after it (or in a closed segment) stops the broker unless
    --truncate-corrupt allows dropping everything from there on."""
    offset = segment.next_offset
    where = f"{segment.log_path} at byte {damage.position} (offset {offset})"
    if (damage.in_middle or later) and not options.truncate_corrupt:
        raise CorruptLog(
            f"corrupt record batch in {where}: {damage.reason}; valid data follows it, so truncating "
            "would lose acknowledged records. Restore the file, or start with --truncate-corrupt to "
            "drop everything from that batch on."
        )
    segment.truncate_to_valid()
    for base in later:
        Segment(segment.log_path.parent, base, segment.index_interval).delete()
    if damage.in_middle or later:
        log.warning(
            "--truncate-corrupt: truncated %s and dropped %d later segment(s): %s",
            where,
            len(later),
            damage.reason,
        )
    else:
        log.warning("truncated torn tail of %s: %s", where, damage.reason)


def adopt_orphan_txn_indexes(directory: Path, segments: list[Segment], names: Collection[str]) -> None:
    """A compaction stopped by a crash after its swap leaves the `.txnindex` of the
    segments it replaced: their entries move to the segment now holding their markers.
    `names`: the directory's files before recovery, which deletes files and makes none."""
    bases = {s.base_offset for s in segments}
    if not any(_orphaned(name, bases) for name in names):
        return
    names = os.listdir(directory)  # after recovery, which may have dropped segments
    for path in sorted(directory / name for name in names if _orphaned(name, bases)):
        orphan = TxnIndex(path)
        if orphan.load():
            for entry in orphan.entries:
                home = segments[segment_list.index_of(segments, entry.last_offset)]
                if home.txn_index.load():
                    home.txn_index.rewrite(sorted([*home.txn_index.entries, entry], key=_marker_offset))
        orphan.delete()


def _orphaned(name: str, bases: set[int]) -> bool:
    """A `.txnindex` file of a segment not among `bases` (a name without a number is no
    segment's and left alone)."""
    if not name.endswith(TXN_INDEX_SUFFIX):
        return False
    stem = name[: -len(TXN_INDEX_SUFFIX)]
    return stem.isdigit() and int(stem) not in bases


def restored_producers(
    directory: Path, segments: list[Segment], *, clean: bool, names: Collection[str]
) -> ProducerStates:
    """The snapshot of the last roll or clean close, brought up to date from the
    batches written after it; without one, everything from the log start. A retried
    batch is then recognised across a restart and open transactions stay open, as
    in Kafka. Aborted transactions whose markers follow the snapshot are indexed
    again from those batches (after a crash their entries may be missing or torn)."""
    end = segments[-1].next_offset
    indexes_whole = all(segment.txn_index.load() for segment in segments)
    snapshot = _read_producer_snapshot(directory) if PRODUCER_SNAPSHOT_FILE in names else None
    if snapshot is not None and snapshot[0] <= end and indexes_whole:
        since, states = snapshot
        if clean and since == end:
            return states
    else:
        since, states = segments[0].base_offset, ProducerStates()
    for segment in segments:
        kept = [e for e in segment.txn_index.entries if e.last_offset < since]
        if len(kept) != len(segment.txn_index.entries) or not indexes_whole:
            segment.txn_index.rewrite(kept)
    for segment in segments:
        if segment.next_offset > since:
            for entry in states.replay(segment.batches_with_markers_from(since)):
                segment.txn_index.append(entry)
    return states


def write_producer_snapshot(directory: Path, end: int, producers: ProducerStates) -> None:
    snapshot = {"end": end, "producers": producers.snapshot()}
    write_atomically(directory, PRODUCER_SNAPSHOT_FILE, json.dumps(snapshot))


def _read_producer_snapshot(directory: Path) -> tuple[int, ProducerStates] | None:
    path = directory / PRODUCER_SNAPSHOT_FILE
    try:
        snapshot = json.loads(path.read_text(encoding="utf-8"))
        return int(snapshot["end"]), ProducerStates.from_snapshot(snapshot["producers"])
    except FileNotFoundError:
        return None
    except (OSError, ValueError, KeyError, TypeError) as exc:
        log.warning("ignoring %s (%s): producer state is rebuilt from the log instead", path, exc)
        return None


def _marker_offset(entry: AbortedTxn) -> int:
    return entry.last_offset


def read_epochs(directory: Path, names: Collection[str]) -> list[tuple[int, int]]:
    """The leader-epoch checkpoint's entries; none when there is no (readable) file.
    `names`: the directory's files, so a partition without one costs no failed open."""
    if LEADER_EPOCH_FILE not in names:
        return []
    path = directory / LEADER_EPOCH_FILE
    try:
        version, count, *lines = path.read_text(encoding="ascii").split("\n")
        entries = [(int(e), int(s)) for e, s in (line.split() for line in lines if line.strip())]
        if int(version) != 0 or int(count) != len(entries):
            raise ValueError(f"version {version}, {count} entries announced, {len(entries)} found")
    except FileNotFoundError:
        return []
    except (OSError, ValueError) as exc:
        log.warning("ignoring %s (%s): every offset is taken to be of epoch 0", path, exc)
        return []
    return entries


def write_epochs(directory: Path, epoch_starts: list[tuple[int, int]]) -> None:
    lines = [f"{epoch} {start}" for epoch, start in epoch_starts]
    write_atomically(directory, LEADER_EPOCH_FILE, "\n".join(["0", str(len(lines)), *lines]) + "\n")


def read_start(directory: Path, names: Collection[str]) -> int:
    """Where DeleteRecords moved the log start; 0 without the file (`names`: the directory's files)."""
    if LOG_START_FILE not in names:
        return 0
    try:
        return int((directory / LOG_START_FILE).read_text().strip())
    except (FileNotFoundError, ValueError):
        return 0


def write_start(directory: Path, offset: int) -> None:
    write_atomically(directory, LOG_START_FILE, f"{offset}\n")
