"""A partition log on disk: a directory `<topic>-<partition>` of segments.

The last segment is active (appended to); it rolls when the next append would
exceed segment.bytes or its first batch is segment.ms old. Retention deletes
whole closed segments (time, size, or below a DeleteRecords start offset), so
the log start offset moves to the first remaining segment.

One lock guards the segment list: the Trio thread appends and reads, the
housekeeping thread flushes and applies retention.

Producer state (idempotent sequences, open transactions) is snapshotted at every
roll and at a clean close, as Kafka's `.snapshot` files are; a restart loads the
snapshot and replays the batches written after it, which also derives again the
`.txnindex` entries of the aborted transactions whose markers came after it.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
from bisect import bisect_right
from collections.abc import Collection, Iterator
from itertools import chain
from pathlib import Path
from typing import NamedTuple

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.protocol.file_records import FileRecords
from kafka_shim.protocol.records import RecordBatches
from kafka_shim.storage import faults
from kafka_shim.storage.durability import DiskOptions, FsyncPolicy
from kafka_shim.storage.errors import CorruptLog, StorageError
from kafka_shim.storage.log import (
    AppendHook,
    PartitionLog,
    SegmentSpan,
    TimestampOffset,
    first_record_at_or_after,
)
from kafka_shim.storage.log_config import LogConfig
from kafka_shim.storage.producer_state import ProducerStates
from kafka_shim.storage.scan import Damage
from kafka_shim.storage.segment import LOG_SUFFIX, Segment, SegmentMark, file_stem
from kafka_shim.storage.swap import Replacement, complete_swaps, fsync_directory, write_atomically
from kafka_shim.storage.txn_index import TXN_INDEX_SUFFIX, AbortedTxn, TxnIndex, overlapping

log = logging.getLogger("kafka_shim.storage")

LOG_START_FILE = "log-start-offset"
# Below this a fetch's records are read and copied: a duplicated descriptor and a sendfile
# per range cost more than copying a few kilobytes.
SENDFILE_MIN_BYTES = 32 * 1024
# Producers' last batches and open transactions, written at every roll and at a
# clean close (Kafka's .snapshot files).
PRODUCER_SNAPSHOT_FILE = "producer-state.json"
# The leader-epoch cache, in Kafka's own checkpoint format (version 0, a count, "epoch offset"
# lines), written when a leader epoch starts (shim.testbroker.cluster moves), read back at open.
LEADER_EPOCH_FILE = "leader-epoch-checkpoint"


class SegmentFile(NamedTuple):
    base_offset: int
    next_offset: int
    size: int
    max_timestamp: int
    path: Path


class DiskLog(PartitionLog):
    def __init__(
        self,
        directory: Path,
        config: LogConfig,
        options: DiskOptions,
        segments: list[Segment],
        start_offset: int,
        on_append: AppendHook,
    ) -> None:
        super().__init__(on_append)
        self.directory = directory
        self.config = config
        self.options = options
        self._segments = segments
        self._start = max(start_offset, segments[0].base_offset)
        self._dirty = False
        self._closed = False
        # False for a new log until its directory is fsynced along with its first data.
        self._directory_synced = True
        # segment.ms counts from the broker's clock at the active segment's
        # first append (since start-up for a reopened one), not from record
        # timestamps: replayed old data must not roll a segment per batch.
        self._active_since: int | None = None

    # -- opening ------------------------------------------------------------

    @classmethod
    def create(
        cls,
        directory: Path,
        config: LogConfig,
        options: DiskOptions,
        on_append: AppendHook = lambda log: None,
    ) -> DiskLog:
        """A new, empty log: a directory only, its first segment's files made by its first
        append. The directory is not fsynced here (2 ms a partition on a journalled disk):
        the catalog's write then fsyncs the data directory, which holds the new directory's
        name, and the directory itself is fsynced with the first data fsynced into it."""
        faults.check("partition")
        if directory.exists():
            shutil.rmtree(directory)  # left over from a topic deleted before a crash
        directory.mkdir(parents=True)
        segment = Segment.create(directory, 0, config.index_interval_bytes, files=False)
        made = cls(directory, config, options, [segment], 0, on_append)
        made._directory_synced = False
        return made

    @classmethod
    def open(
        cls,
        directory: Path,
        config: LogConfig,
        options: DiskOptions,
        *,
        clean: bool,
        on_append: AppendHook = lambda log: None,
    ) -> DiskLog:
        """Open after a restart. After a clean shutdown segments load from their
        indexes; otherwise the active segment is verified batch by batch and a
        torn tail cut off. Closed segments were fsynced when rolled."""
        complete_swaps(directory)
        bases = _segment_bases(os.listdir(directory))  # a listing: globs cost more per partition
        start = _read_start(directory)
        if not bases:  # made before a crash, its empty files lost with the crash
            made = cls(
                directory,
                config,
                options,
                [Segment.create(directory, start, config.index_interval_bytes, files=False)],
                start,
                on_append,
            )
            made._directory_synced = False
            return made
        segments: list[Segment] = []
        expected = bases[0]
        for number, base in enumerate(bases):
            active = number == len(bases) - 1
            loaded = (
                Segment.load(directory, base, config.index_interval_bytes) if clean or not active else None
            )
            if loaded is None:
                loaded, damage = Segment.recover(directory, base, config.index_interval_bytes, expected)
                if damage is not None:
                    _handle_damage(loaded, damage, options, later=bases[number + 1 :])
                    segments.append(loaded)
                    break
            segments.append(loaded)
            expected = loaded.next_offset
        log = cls(directory, config, options, segments, start, on_append)
        # Epochs that began past a torn tail cut off at recovery are gone with it.
        epochs = [(e, s) for e, s in _read_epochs(directory) if s <= log.log_end_offset]
        log.epoch_starts = epochs or log.epoch_starts
        log._adopt_orphan_txn_indexes()
        log.producers = log._restored_producers(clean)
        return log

    def _adopt_orphan_txn_indexes(self) -> None:
        """A compaction stopped by a crash after its swap leaves the `.txnindex` of the
        segments it replaced: their entries move to the segment now holding their markers."""
        bases = {s.base_offset for s in self._segments}
        names = os.listdir(self.directory)
        for path in sorted(self.directory / name for name in names if name.endswith(TXN_INDEX_SUFFIX)):
            if not path.stem.isdigit() or int(path.stem) in bases:
                continue
            orphan = TxnIndex(path)
            if orphan.load():
                for entry in orphan.entries:
                    home = self._segments[self._segment_for(entry.last_offset)]
                    if home.txn_index.load():
                        home.txn_index.rewrite(sorted([*home.txn_index.entries, entry], key=_marker_offset))
            orphan.delete()

    def _restored_producers(self, clean: bool) -> ProducerStates:
        """The snapshot of the last roll or clean close, brought up to date from the
        batches written after it; without one, everything from the log start. A retried
        batch is then recognised across a restart and open transactions stay open, as
        in Kafka. Aborted transactions whose markers follow the snapshot are indexed
        again from those batches (after a crash their entries may be missing or torn)."""
        end = self.log_end_offset
        indexes_whole = all(segment.txn_index.load() for segment in self._segments)
        snapshot = _read_producer_snapshot(self.directory)
        if snapshot is not None and snapshot[0] <= end and indexes_whole:
            since, states = snapshot
            if clean and since == end:
                return states
        else:
            since, states = self._segments[0].base_offset, ProducerStates()
        for segment in self._segments:
            kept = [e for e in segment.txn_index.entries if e.last_offset < since]
            if len(kept) != len(segment.txn_index.entries) or not indexes_whole:
                segment.txn_index.rewrite(kept)
        for segment in self._segments:
            if segment.next_offset > since:
                for entry in states.replay(segment.batches_with_markers_from(since)):
                    segment.txn_index.append(entry)
        return states

    # -- the contract -------------------------------------------------------

    @property
    def log_start_offset(self) -> int:
        return self._start

    @property
    def log_end_offset(self) -> int:
        return self._segments[-1].next_offset

    def segment_spans(self, now_ms: int) -> list[SegmentSpan]:
        with self._lock:
            return [
                SegmentSpan(
                    max(segment.base_offset, self._start), segment.size == 0, _modified_ms(segment, now_ms)
                )
                for segment in self._segments
            ]

    @property
    def active(self) -> Segment:
        return self._segments[-1]

    @property
    def size_in_bytes(self) -> int:
        """The bytes of every segment's log file, Kafka's `UnifiedLog.size` (indexes not counted)."""
        with self._lock:
            return sum(segment.size for segment in self._segments)

    def configure(self, config: LogConfig) -> None:
        with self._lock:
            self.config = config
            self.active.index_interval = config.index_interval_bytes

    def _write(self, batches: RecordBatches) -> None:
        with self._lock:
            self._append(batches)

    def _append(self, batches: RecordBatches) -> tuple[Segment, SegmentMark]:
        """All of `batches` or nothing: StorageError(KAFKA_STORAGE_ERROR) for a full or broken
        disk, the log as it was (a batch written but not fsynced under `always` is cut off).
        Returns the segment written and where it ended before, to undo the write."""
        self._check_open()
        now = self.options.clock()
        active = self._segments[-1]
        if self._should_roll(active, len(batches.data), now):
            try:
                self._roll()
            except OSError as exc:
                raise StorageError(
                    ErrorCode.KAFKA_STORAGE_ERROR, f"cannot roll {self.directory.name}: {exc}"
                ) from exc
            active = self._segments[-1]
        mark = active.mark()
        active.append(batches)
        if self.options.fsync is FsyncPolicy.ALWAYS:
            try:
                active.flush()
                self._sync_directory_once()
            except OSError as exc:
                active.rewind(mark)
                raise StorageError(
                    ErrorCode.KAFKA_STORAGE_ERROR, f"cannot fsync {active.log_path}: {exc}"
                ) from exc
        else:
            self._dirty = True
        if self._active_since is None:
            self._active_since = now
        return active, mark

    def _write_marker(self, batch: RecordBatches, aborted: AbortedTxn | None) -> None:
        with self._lock:
            active, mark = self._append(batch)
            if aborted is None:
                return
            try:
                active.txn_index.append(aborted)
            except OSError as exc:
                # A marker without its aborted range would show aborted records as committed.
                active.rewind(mark)
                raise StorageError(
                    ErrorCode.KAFKA_STORAGE_ERROR, f"cannot index the abort in {active.log_path}: {exc}"
                ) from exc

    def _should_roll(self, active: Segment, incoming: int, now: int) -> bool:
        if active.size == 0:
            return False
        if active.size + incoming > self.config.segment_bytes:
            return True
        return self._active_since is not None and now - self._active_since >= self.config.roll_ms

    def _roll(self) -> None:
        """OSError (a full disk) leaves the active segment active and no new one behind."""
        # A restart replays from here at most: a transaction open in an older segment
        # stays open without reading that segment again.
        self._write_producer_snapshot()
        fresh = Segment(self.directory, self.log_end_offset, self.config.index_interval_bytes)
        try:
            fresh = Segment.create(self.directory, self.log_end_offset, self.config.index_interval_bytes)
            fsync_directory(self.directory)
            self._directory_synced = True
            self.active.seal()
        except OSError:
            fresh.delete()
            raise
        self._segments.append(fresh)
        self._active_since = None

    def _epochs_changed(self) -> None:
        lines = [f"{epoch} {start}" for epoch, start in self.epoch_starts]
        write_atomically(self.directory, LEADER_EPOCH_FILE, "\n".join(["0", str(len(lines)), *lines]) + "\n")

    def _write_producer_snapshot(self) -> None:
        snapshot = {"end": self.log_end_offset, "producers": self.producers.snapshot()}
        write_atomically(self.directory, PRODUCER_SNAPSHOT_FILE, json.dumps(snapshot))

    def aborted_ranges(self, start_offset: int, end_offset: int) -> list[AbortedTxn]:
        with self._lock:
            segments = self._segments[self._segment_for(start_offset) :]
            entries: Iterator[AbortedTxn] = chain.from_iterable(s.txn_index.entries for s in segments)
            return overlapping(entries, start_offset, end_offset)

    def roll(self) -> None:
        """Close the active segment now (it must hold something)."""
        with self._lock:
            if self.active.size:
                self._roll()

    def _segment_for(self, offset: int) -> int:
        return max(bisect_right(self._segments, offset, key=lambda s: s.base_offset) - 1, 0)

    def read(self, offset: int, max_bytes: int, *, min_one: bool = True) -> bytes:
        with self._lock:
            return _pread_spans(self._spans(offset, max_bytes, min_one))

    def read_file_records(self, offset: int, max_bytes: int, *, min_one: bool = True) -> bytes | FileRecords:
        """As `read`, left in the segment files when there is enough to be worth a sendfile."""
        with self._lock:
            spans = self._spans(offset, max_bytes, min_one)
            if sum(length for _, _, length in spans) < SENDFILE_MIN_BYTES:
                return _pread_spans(spans)
            # Own descriptors: retention or compaction may close the segment's before it is sent.
            return FileRecords((os.dup(fd), position, length) for fd, position, length in spans)

    def _spans(self, offset: int, max_bytes: int, min_one: bool) -> list[tuple[int, int, int]]:
        """(descriptor, position, length) of whole batches from the one holding `offset`,
        across segments while the budget lasts. Called under the lock."""
        self._check_open()
        self.check_fetch_offset(offset)
        if offset == self.log_end_offset:
            return []  # the common empty fetch: no segment search
        spans: list[tuple[int, int, int]] = []
        budget = max_bytes
        for segment in self._segments[self._segment_for(offset) :]:
            position, length, to_the_end = segment.span(offset, budget, min_one and not spans)
            if length:
                spans.append((segment.fd, position, length))
            budget -= length
            # Go on into the next segment (also across a compaction gap that
            # leaves nothing at or after `offset` here) while budget remains.
            if not to_the_end or budget <= 0:
                break
            offset = segment.next_offset
        return spans

    def offset_for_timestamp(self, timestamp: int) -> TimestampOffset | None:
        with self._lock:
            for segment in self._segments:
                found = segment.find_timestamp(timestamp)
                if found is not None:
                    return found
            return None

    def max_timestamp(self) -> TimestampOffset | None:
        with self._lock:
            best = None
            for segment in self._segments:  # the first segment reaching the max, as Kafka's maxBy
                if segment.size and (best is None or segment.max_timestamp > best.max_timestamp):
                    best = segment
            if best is None:
                return None
            batch = best.batch_holding(best.offset_of_max_timestamp)  # the first batch reaching it
            if batch is None:
                return TimestampOffset(best.max_timestamp, best.offset_of_max_timestamp)
            return first_record_at_or_after(best.batch_bytes(batch), best.max_timestamp)

    # -- moving the start ---------------------------------------------------

    def delete_records(self, offset: int) -> int:
        with self._lock:
            self._check_open()
            target = self.records_deletion_target(offset)
            if target > self._start:
                try:
                    _write_start(self.directory, target)
                except OSError as exc:
                    raise StorageError(
                        ErrorCode.KAFKA_STORAGE_ERROR,
                        f"cannot move the start of {self.directory.name}: {exc}",
                    ) from exc
                self._start = target
                self._delete_leading(self._below_start())
            return self._start

    def _below_start(self) -> int:
        """How many leading segments hold only offsets below the log start."""
        count = 0
        for following in self._segments[1:]:
            if following.base_offset > self._start:
                break
            count += 1
        return count

    def apply_retention(self, now_ms: int | None = None) -> int:
        """Delete closed segments past retention.ms / retention.bytes (delete
        policy) or wholly below the log start; returns how many went."""
        now = self.options.clock() if now_ms is None else now_ms
        with self._lock:
            if self._closed:
                return 0
            count = self._below_start()
            config = self.config
            if config.deletes:
                limited = config.retention_bytes >= 0
                excess = sum(s.size for s in self._segments[count:]) - config.retention_bytes
                for segment in self._segments[count:]:
                    expired = (
                        config.retention_ms >= 0 and now - segment.largest_timestamp() > config.retention_ms
                    )
                    if segment is self.active:
                        if expired and segment.size:
                            # An expired active segment goes too, as in Kafka: roll, then delete.
                            self._roll()
                            count += 1
                        break
                    if not (expired or (limited and excess >= segment.size) or segment.size == 0):
                        break
                    excess -= segment.size
                    count += 1
            return self._delete_leading(count)

    def expire_producers(self, now_ms: int | None = None) -> int:
        """producer.id.expiration.ms: forget idle producers (see ProducerStates.expire);
        returns how many went. A snapshot written later no longer holds them."""
        now = self.options.clock() if now_ms is None else now_ms
        with self._lock:
            return len(self.producers.expire(now, self.options.producer_id_expiration_ms))

    def _delete_leading(self, count: int) -> int:
        count = min(count, len(self._segments) - 1)
        doomed, self._segments = self._segments[:count], self._segments[count:]
        for segment in doomed:
            segment.delete()
            log.info("deleted segment %s (retention or log start %d)", segment.log_path, self._start)
        if doomed:
            fsync_directory(self.directory)
            self._start = max(self._start, self._segments[0].base_offset)
        return count

    # -- compaction ---------------------------------------------------------

    def closed_segments(self) -> list[tuple[int, int]]:
        """(base offset, next offset) of every closed segment, oldest first."""
        with self._lock:
            return [(s.base_offset, s.next_offset) for s in self._segments[:-1]]

    def segment_files(self) -> list[SegmentFile]:
        """Every segment as it is now, the active one last: what the cleaner reads without
        the lock (a closed segment's bytes never change; a replaced or deleted one is read
        through the descriptor it opened, and its swap is then refused)."""
        with self._lock:
            return [
                SegmentFile(s.base_offset, s.next_offset, s.size, s.max_timestamp, s.log_path)
                for s in self._segments
            ]

    def segment_bases(self) -> list[int]:
        """Every segment's base offset, the active one last."""
        with self._lock:
            return [s.base_offset for s in self._segments]

    def read_segment(self, base_offset: int) -> bytes:
        """A segment's whole content (the active one as far as written)."""
        with self._lock:
            segment = self._closed_segment(base_offset)
            return os.pread(segment.fd, segment.size, 0)

    def _closed_segment(self, base_offset: int) -> Segment:
        for segment in self._segments:
            if segment.base_offset == base_offset:
                return segment
        raise StorageError(
            ErrorCode.UNKNOWN_SERVER_ERROR, f"no closed segment at {base_offset} in {self.directory}"
        )

    def _consecutive_closed(self, base_offsets: list[int]) -> tuple[int, list[Segment]]:
        """Where the closed segments at `base_offsets` start in the list, and they; ValueError
        unless they are consecutive closed segments."""
        old = [self._closed_segment(base) for base in base_offsets]
        if self.active in old:
            raise ValueError("the active segment cannot be replaced")
        first = self._segments.index(old[0])
        if self._segments[first : first + len(old)] != old:
            raise ValueError("replaced segments must be consecutive")
        return first, old

    def begin_replacement(self, base_offsets: list[int]) -> Replacement:
        """A replacement of consecutive closed segments, to be written (without the lock)
        and handed to `replace_segments`."""
        with self._lock:
            self._check_open()
            first, old = self._consecutive_closed(base_offsets)
            end = self._segments[first + len(old)].base_offset
            return Replacement(self.directory, old[0].base_offset, end, self.config.index_interval_bytes)

    def replace_segments(
        self, base_offsets: list[int], batches: bytes | Replacement, emptied_aborts: Collection[int] = ()
    ) -> bool:
        """Replace consecutive closed segments by one holding `batches` (whole, CRC-valid
        batches whose offsets lie inside the replaced range, in order; gaps allowed), or
        by a written Replacement. Crash-safe: see `storage.swap`. Under the lock only the
        swap itself runs (renames, directory fsyncs): False, the replacement discarded, if
        the segments are no longer all there (retention or DeleteRecords took some). The
        aborted ranges closed by the ABORT markers at `emptied_aborts` (their transactions
        have no batch left) leave the transaction index."""
        if isinstance(batches, Replacement):
            replacement = batches
        else:
            replacement = self.begin_replacement(base_offsets)
            replacement.write(batches)
        try:
            fresh = replacement.finish()
        except BaseException:
            replacement.discard()
            raise
        with self._lock:
            try:
                if self._closed:
                    raise StorageError(
                        ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, f"{self.directory.name} was deleted"
                    )
                first, old = self._consecutive_closed(base_offsets)
            except (StorageError, ValueError):
                replacement.discard()
                return False
            aborted = [
                entry
                for segment in old
                for entry in segment.txn_index.entries
                if entry.last_offset not in emptied_aborts
            ]
            for segment in old:
                segment.close()
            replacement.install([s.base_offset for s in old])
            # The markers keep their offsets, so their aborted ranges move along;
            # a crash before this is repaired by `_adopt_orphan_txn_indexes`.
            fresh.txn_index.rewrite(aborted)
            for segment in old[1:]:
                segment.txn_index.delete()
            self._segments[first : first + len(old)] = [fresh]
        fsync_directory(self.directory)
        return True

    # -- durability and lifecycle -------------------------------------------

    def flush(self) -> None:
        with self._lock:
            if self._closed or not self._dirty:
                return
            self._dirty = False
            # fsync a duplicate outside the lock: appends go on meanwhile, and
            # a segment deleted by retention cannot pull the descriptor away.
            fd = os.dup(self.active.fd)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
        if not self._directory_synced:  # once in a log's life: no lock taken otherwise
            with self._lock:
                self._sync_directory_once()

    def _sync_directory_once(self) -> None:
        """fsync a new log's directory the first time data in it is, so that the names of
        its segment files survive a power loss with the data."""
        if not self._directory_synced:
            fsync_directory(self.directory)
            self._directory_synced = True

    def close(self) -> bool:
        """Whether the log closed cleanly: False when its last segment or producer snapshot
        could not be written (a full disk), so the next start verifies it as after a crash."""
        with self._lock:
            if self._closed:
                return True
            clean = True
            try:
                self.active.seal()
                # A log never written to has no producers to remember, and its snapshot
                # (two fsyncs) would be most of a clean stop of many new partitions.
                if self.log_end_offset:
                    self._write_producer_snapshot()  # fsyncs the directory too
                    self._directory_synced = True
            except OSError as exc:
                log.error("cannot close %s cleanly: %s", self.directory, exc)
                clean = False
            for segment in self._segments:
                segment.close()
            self._closed = True
            return clean

    def delete(self) -> None:
        with self._lock:
            for segment in self._segments:
                segment.close()
            self._closed = True
            faults.check("remove")
            shutil.rmtree(self.directory, ignore_errors=True)

    def _check_open(self) -> None:
        if self._closed:
            raise StorageError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, f"{self.directory.name} was deleted")


def _pread_spans(spans: list[tuple[int, int, int]]) -> bytes:
    return b"".join(os.pread(fd, length, position) for fd, position, length in spans)


def _modified_ms(segment: Segment, now_ms: int) -> int:
    """When the segment's log file was last written; `now_ms` for one not made yet (a new
    partition's first segment, never written to)."""
    try:
        return segment.log_path.stat().st_mtime_ns // 1_000_000
    except FileNotFoundError:
        return now_ms


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


def _read_epochs(directory: Path) -> list[tuple[int, int]]:
    """The leader-epoch checkpoint's entries; none when there is no (readable) file."""
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


def _segment_bases(names: list[str]) -> list[int]:
    """The base offsets of the segments among a directory's file names, in order."""
    stems = (name[: -len(LOG_SUFFIX)] for name in names if name.endswith(LOG_SUFFIX))
    return sorted(int(stem) for stem in stems if stem.isdigit())


def _read_start(directory: Path) -> int:
    try:
        return int((directory / LOG_START_FILE).read_text().strip())
    except (FileNotFoundError, ValueError):
        return 0


def _write_start(directory: Path, offset: int) -> None:
    write_atomically(directory, LOG_START_FILE, f"{offset}\n")


__all__ = ["DiskLog", "file_stem"]
