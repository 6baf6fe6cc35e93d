"""A partition log on disk: a directory `<topic>-<partition>` of segments.

The last segment is active (appended to); it rolls when the next append would
exceed segment.bytes or its first batch is segment.ms old. Retention deletes
whole closed segments (time, size, or below a DeleteRecords start offset), so
the log start offset moves to the first remaining segment.

One lock guards the segment list: the Trio thread appends and reads, the
housekeeping thread flushes and applies retention.

Producer state (idempotent sequences, open transactions) is snapshotted at every
roll and at a clean close, as Kafka's `.snapshot` files are; a restart loads the
snapshot and replays the batches written after it (storage.log_recovery, with the
directory's other files). What the log asks of its segments is storage.segment_list.
"""

from __future__ import annotations

import logging
import os
import shutil
from collections.abc import Collection
from pathlib import Path

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.protocol.file_records import FileRecords
from kafka_shim.protocol.records import RecordBatches
from kafka_shim.storage import faults, log_recovery, segment_list
from kafka_shim.storage.durability import DiskOptions, FsyncPolicy
from kafka_shim.storage.errors import StorageError
from kafka_shim.storage.log import AppendHook, PartitionLog, SegmentSpan, TimestampOffset
from kafka_shim.storage.log_config import LogConfig
from kafka_shim.storage.segment import Segment, SegmentMark
from kafka_shim.storage.segment_list import SegmentFile, Span
from kafka_shim.storage.swap import Replacement, complete_swaps, fsync_directory
from kafka_shim.storage.txn_index import AbortedTxn

log = logging.getLogger("kafka_shim.storage")

# Below this a fetch's records are read and copied: a duplicated descriptor and a sendfile
# per range cost more than copying a few kilobytes.
SENDFILE_MIN_BYTES = 32 * 1024
_ALWAYS = FsyncPolicy.ALWAYS  # read once: an enum member read through its class costs 50 ns


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
        # One listing serves the whole opening: globs, and reads of files a partition seldom
        # has (each a FileNotFoundError), cost more per partition than the listing.
        names = complete_swaps(directory)
        bases = log_recovery.segment_bases(names)
        start = log_recovery.read_start(directory, names)
        if not bases:  # made before a crash, its empty files lost with the crash
            segment = Segment.create(directory, start, config.index_interval_bytes, files=False)
            made = cls(directory, config, options, [segment], start, on_append)
            made._directory_synced = False
            return made
        segments = log_recovery.load_segments(directory, bases, config, options, clean=clean)
        log = cls(directory, config, options, segments, start, on_append)
        # Epochs that began past a torn tail cut off at recovery are gone with it.
        epochs = [(e, s) for e, s in log_recovery.read_epochs(directory, names) if s <= log.log_end_offset]
        log.epoch_starts = epochs or log.epoch_starts
        log_recovery.adopt_orphan_txn_indexes(directory, segments, names)
        log.producers = log_recovery.restored_producers(directory, segments, clean=clean, names=names)
        return log

    # -- the contract -------------------------------------------------------

    @property
    def log_start_offset(self) -> int:
        return self._start

    @property
    def log_end_offset(self) -> int:
        return self._segments[-1].next_offset

    def segment_spans(self, now_ms: int) -> list[SegmentSpan]:
        with self._lock:
            return segment_list.listed(self._segments, self._start, now_ms)

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

    def _write(self, batches: RecordBatches, now_ms: int | None = None) -> None:
        self._append(batches, now_ms)  # under the lock: append and append_placed hold it

    def _append(self, batches: RecordBatches, now_ms: int | None = None) -> tuple[Segment, SegmentMark]:
        """All of `batches` or nothing: StorageError(KAFKA_STORAGE_ERROR) for a full or broken
        disk, the log as it was (a batch written but not fsynced under `always` is cut off).
        Returns the segment written and where it ended before, to undo the write."""
        self._check_open()
        now = self.options.clock() if now_ms is None else now_ms
        active = self._segments[-1]
        if segment_list.rolls(active, len(batches.data), self.config, now, self._active_since):
            try:
                self._roll()
            except OSError as exc:
                raise StorageError(
                    ErrorCode.KAFKA_STORAGE_ERROR, f"cannot roll {self.directory.name}: {exc}"
                ) from exc
            active = self._segments[-1]
        mark = active.mark()
        active.append(batches, mark)
        if self.options.fsync is _ALWAYS:
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
        log_recovery.write_epochs(self.directory, self.epoch_starts)

    def _write_producer_snapshot(self) -> None:
        log_recovery.write_producer_snapshot(self.directory, self.log_end_offset, self.producers)

    def aborted_ranges(self, start_offset: int, end_offset: int) -> list[AbortedTxn]:
        with self._lock:
            return segment_list.aborted_ranges(self._segments, start_offset, end_offset)

    def roll(self) -> None:
        """Close the active segment now (it must hold something)."""
        with self._lock:
            if self.active.size:
                self._roll()

    def read(self, offset: int, max_bytes: int, *, min_one: bool = True) -> bytes:
        with self._lock:
            return _read_spans(self._spans(offset, max_bytes, min_one))

    def read_file_records(self, offset: int, max_bytes: int, *, min_one: bool = True) -> bytes | FileRecords:
        """As `read`, left in the segment files when there is enough to be worth a sendfile."""
        with self._lock:
            spans = self._spans(offset, max_bytes, min_one)
            # One span nearly always (a read within the active segment): no generator to sum.
            size = spans[0][2] if len(spans) == 1 else sum(length for _, _, length in spans)
            if size < SENDFILE_MIN_BYTES:
                return _read_spans(spans)
            # Own descriptors: retention or compaction may close the segment's before it is sent.
            return FileRecords((os.dup(segment.fd), position, length) for segment, position, length in spans)

    def _spans(self, offset: int, max_bytes: int, min_one: bool) -> list[Span]:
        """(segment, position, length) of whole batches from the one holding `offset`,
        across segments while the budget lasts. Called under the lock."""
        self._check_open()
        self.check_fetch_offset(offset)
        if offset == self.log_end_offset:
            return []  # the common empty fetch: no segment search
        return segment_list.spans(self._segments, offset, max_bytes, min_one)

    def offset_for_timestamp(self, timestamp: int) -> TimestampOffset | None:
        with self._lock:
            return segment_list.offset_for_timestamp(self._segments, timestamp)

    def max_timestamp(self) -> TimestampOffset | None:
        with self._lock:
            return segment_list.max_timestamp(self._segments)

    # -- moving the start ---------------------------------------------------

    def delete_records(self, offset: int) -> int:
        with self._lock:
            self._check_open()
            target = self.records_deletion_target(offset)
            if target > self._start:
                try:
                    log_recovery.write_start(self.directory, target)
                except OSError as exc:
                    raise StorageError(
                        ErrorCode.KAFKA_STORAGE_ERROR,
                        f"cannot move the start of {self.directory.name}: {exc}",
                    ) from exc
                self._start = target
                self._delete_leading(segment_list.count_below(self._segments, self._start))
            return self._start

    def apply_retention(self, now_ms: int | None = None) -> int:
        """Delete closed segments past retention.ms / retention.bytes (delete
        policy) or wholly below the log start; returns how many went."""
        now = self.options.clock() if now_ms is None else now_ms
        with self._lock:
            if self._closed:
                return 0
            count = segment_list.count_below(self._segments, self._start)
            if self.config.deletes:
                past, active_expired = segment_list.past_retention(self._segments[count:], self.config, now)
                count += past
                if active_expired:
                    # An expired active segment goes too, as in Kafka: roll, then delete.
                    self._roll()
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
            return segment_list.files(self._segments)

    def segment_bases(self) -> list[int]:
        """Every segment's base offset, the active one last."""
        with self._lock:
            return [s.base_offset for s in self._segments]

    def read_segment(self, base_offset: int) -> bytes:
        """A segment's whole content (the active one as far as written)."""
        with self._lock:
            segment = segment_list.closed_segment(self._segments, base_offset, self.directory)
            return os.pread(segment.fd, segment.size, 0)

    def begin_replacement(self, base_offsets: list[int]) -> Replacement:
        """A replacement of consecutive closed segments, to be written (without the lock)
        and handed to `replace_segments`."""
        with self._lock:
            self._check_open()
            first, old = segment_list.consecutive_closed(self._segments, base_offsets, self.directory)
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
                self._check_open()
                first, old = segment_list.consecutive_closed(self._segments, base_offsets, self.directory)
            except (StorageError, ValueError):
                replacement.discard()
                return False
            segment_list.swap(self._segments, first, old, replacement, fresh, emptied_aborts)
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
            remove(self)

    def _check_open(self) -> None:
        if self._closed:
            raise StorageError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, f"{self.directory.name} was deleted")


def remove(disk_log: DiskLog) -> None:
    """Refuse every later use of the log and remove its directory (its files closed)."""
    disk_log._closed = True
    faults.check("remove")
    shutil.rmtree(disk_log.directory, ignore_errors=True)


def _read_spans(spans: list[Span]) -> bytes:
    if len(spans) == 1:  # the common fetch, from one segment: no join
        segment, position, length = spans[0]
        return segment.read_at(position, length)
    return b"".join(segment.read_at(position, length) for segment, position, length in spans)


__all__ = ["SENDFILE_MIN_BYTES", "DiskLog"]
