"""Log compaction (cleanup.policy=compact) as pure functions over record batches,
following Kafka's LogCleaner / MemoryRecords.filterTo. No I/O, no clock.

A cleaning round, as Kafka's LogCleaner.doClean runs one:

    latest = latest_offsets(cleanable)
        cleanable: Iterable[bytes], runs of whole v2 batches: the segments below the first
        uncleanable offset (`first_uncleanable_offset`), oldest first, and nothing after.
        Returns {key: offset of its newest record} (Kafka's OffsetMap over the dirty section).

    cleaned = compact(cleanable, latest, now_ms=..., delete_retention_ms=...,
                      active_producers={producer id: LastRecord})
        Returns bytes: the surviving batches, back to back, ready for
        DiskLog.replace_segments. Every offset kept keeps its number (gaps allowed).

A cleaner that walks the log in steps or chunks scans each batch once with `scan` and
feeds the same `ScannedBatch`es to `add_latest_offsets` and `compact_scanned`, with one
`CleanedTransactions` for the whole round (what it learns of a transaction's batches
decides its marker).

What survives, as in Kafka:
- A record whose key's newest offset is its own (or whose key is not in `latest`).
- Records without a key are dropped (Kafka refuses them in compacted topics
  and its cleaner discards any that got in).
- A tombstone (null value) survives until its batch's delete horizon passes.
  The first clean that keeps a tombstone stamps the batch with a horizon of
  `now_ms + delete_retention_ms` (KIP-534: attribute bit 0x40, the horizon in
  baseTimestamp, record timestamps re-based so they do not change); a later
  clean drops tombstones once `now_ms` reaches it.
- A batch keeps its bytes when nothing in it changes; otherwise it is re-encoded
  with the same base offset, last offset delta, compression, timestamp type,
  producer id/epoch, base sequence and partition leader epoch, so a producer's
  last sequence still lines up. A batch left with no records disappears, except
  (LogCleaner's RETAIN_EMPTY, an empty header remembering its sequence) the batch
  holding an active producer's last data offset (`LastRecord`), or its marker when it
  has no data offset in its epoch.
- Transactions (`TransactionFilter`, `CleanedTransactions`): records of aborted
  transactions never stand for their keys and are dropped, as Kafka's cleaner discards
  them; records at or after the last stable offset (a transaction still open may yet
  abort) are not in the key map, and the cleaner cleans only below that offset.
  A COMMIT or ABORT marker stays while a batch of its transaction is in the round; once
  none is, its batch is stamped with a delete horizon as a tombstone's is, and a clean at
  or after it removes the marker (Kafka's CleanedTransactionMetadata); an aborted
  transaction's range leaves the transaction index when its marker becomes removable.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterable, Iterator, Mapping, Sequence
from itertools import compress as compress_by
from typing import NamedTuple, Protocol

from kafka_shim.protocol.control_records import read_marker
from kafka_shim.protocol.record_codec import (
    DELETE_HORIZON_FLAG,
    Record,
    batch_keyed_records,
    decode_batch,
    encode_batch,
)
from kafka_shim.protocol.records import COMPRESSION_MASK, BatchHeader, iter_headers
from kafka_shim.protocol.settings import LONG_MAX
from kafka_shim.storage.producer_state import LastRecord
from kafka_shim.storage.txn_index import AbortedTxn


class KeyOffsets(Protocol):
    """The newest offset of each key: a dict, or the disk cleaner's bounded OffsetMap."""

    def get(self, key: bytes, default: int, /) -> int: ...


class SegmentSpan(NamedTuple):
    """What a round's end is decided from: a segment's offsets and newest timestamp (a disk
    log's SegmentFile has them too)."""

    base_offset: int
    next_offset: int
    max_timestamp: int


def first_uncleanable_offset(
    segments: Sequence[SegmentSpan], *, stable_offset: int, now_ms: int, min_compaction_lag_ms: int
) -> int:
    """Where a cleaning round stops, as Kafka's LogCleanerManager.cleanableOffsets decides it
    and LogToClean rounds it down to a segment: the base offset of the first segment that is
    the active one (the last), reaches the last stable offset, or (with min.compaction.lag.ms
    above 0) holds a record newer than now - min.compaction.lag.ms. The key map covers the
    segments below it and nothing else."""
    for segment in segments[:-1]:
        too_young = min_compaction_lag_ms > 0 and segment.max_timestamp > now_ms - min_compaction_lag_ms
        if too_young or segment.next_offset > stable_offset:
            return segment.base_offset
    return segments[-1].base_offset


class ScannedBatch(NamedTuple):
    """One batch of a blob with (offset, key, value) of its records (none for control
    batches): what a cleaner needs twice, once for the key map and once to clean."""

    blob: bytes
    header: BatchHeader
    records: list[tuple[int, bytes | None, bytes | None]]


class TransactionFilter:
    """Which batches a clean must not let stand for their keys: those of aborted
    transactions (`aborted`: dropped) and any at or after the last stable offset."""

    def __init__(self, aborted: Iterable[AbortedTxn], stable_offset: int) -> None:
        self.stable_offset = stable_offset
        self._ranges: dict[int, tuple[list[int], list[int]]] = {}
        for entry in sorted(aborted, key=lambda e: e.first_offset):
            firsts, lasts = self._ranges.setdefault(entry.producer_id, ([], []))
            firsts.append(entry.first_offset)
            lasts.append(entry.last_offset)

    def aborted(self, header: BatchHeader) -> bool:
        if not header.is_transactional or header.is_control:
            return False
        ranges = self._ranges.get(header.producer_id)
        if ranges is None:
            return False
        firsts, lasts = ranges
        at = bisect_right(firsts, header.base_offset) - 1
        return at >= 0 and header.base_offset <= lasts[at]

    def stands(self, header: BatchHeader) -> bool:
        """Whether the batch's records may supersede older records of their keys."""
        return header.base_offset < self.stable_offset and not self.aborted(header)


NOTHING_ABORTED = TransactionFilter((), LONG_MAX)


class CleanedTransactions:
    """What one cleaning round has seen of transactions, batch by batch in log order (Kafka's
    CleanedTransactionMetadata): a data batch of an aborted transaction may go; a COMMIT or
    ABORT marker may go once the round met no batch of its transaction before it (a batch
    emptied by this round still counts: its marker goes in a later round)."""

    def __init__(self, transactions: TransactionFilter = NOTHING_ABORTED) -> None:
        self.filter = transactions
        self._committing: set[int] = set()  # producers with a batch met since their last COMMIT
        self._aborting: set[int] = set()  # producers with an aborted batch met since their last ABORT
        # ABORT markers (offsets) whose transaction has no batch left: their aborted ranges
        # leave the transaction index (Kafka writes the cleaned index without them).
        self.emptied_aborts: set[int] = set()

    def discardable(self, batch: ScannedBatch) -> bool:
        header = batch.header
        producer_id = header.producer_id
        if not header.is_control:
            if not header.is_transactional:
                return False
            if self.filter.aborted(header):
                self._aborting.add(producer_id)
                return True
            self._committing.add(producer_id)
            return False
        if header.records_count == 0:  # a marker an earlier round emptied
            return True
        marker = read_marker(batch.blob, header)
        if marker is None:  # another control type: kept, as Kafka keeps it
            return False
        pending = self._committing if marker.commit else self._aborting
        discardable = producer_id not in pending
        pending.discard(producer_id)
        if discardable and not marker.commit:
            self.emptied_aborts.add(header.base_offset)
        return discardable


def scan(blobs: Iterable[bytes]) -> Iterator[ScannedBatch]:
    """The batches of `blobs`, in order; values are sliced out, never decoded."""
    for blob in blobs:
        for header in iter_headers(blob):
            records = [] if header.is_control else batch_keyed_records(blob, header)
            yield ScannedBatch(blob, header, records)


def latest_offsets(blobs: Iterable[bytes]) -> dict[bytes, int]:
    """The offset of the newest record of every key (later blobs follow earlier ones)."""
    return add_latest_offsets({}, scan(blobs))


def add_latest_offsets(
    latest: dict[bytes, int], batches: Iterable[ScannedBatch], transactions: TransactionFilter | None = None
) -> dict[bytes, int]:
    """`latest` updated with `batches`, which follow what it was built from."""
    for batch in batches:
        if transactions is not None and not transactions.stands(batch.header):
            continue
        for offset, key, _ in batch.records:
            if key is not None:
                latest[key] = offset
    return latest


def last_records(blobs: Iterable[bytes]) -> dict[int, LastRecord]:
    """Every producer's LastRecord as its batches in `blobs` (the whole log) leave it, each
    taken as active: a marker of a new epoch leaves no data offset, as ProducerStates does.
    A log's cleaner asks the log's own producer state, which also expires idle producers."""
    last: dict[int, LastRecord] = {}
    for blob in blobs:
        for header in iter_headers(blob):
            if not header.has_producer_id:
                continue
            known = last.get(header.producer_id)
            if not header.is_control:
                last[header.producer_id] = LastRecord(header.last_offset, header.producer_epoch)
            elif known is None or known.producer_epoch != header.producer_epoch:
                last[header.producer_id] = LastRecord(None, header.producer_epoch)
    return last


def compact(
    blobs: Iterable[bytes],
    latest: KeyOffsets,
    *,
    now_ms: int,
    delete_retention_ms: int,
    active_producers: Mapping[int, LastRecord] | None = None,
    transactions: CleanedTransactions | None = None,
) -> bytes:
    """The batches of `blobs` with superseded records, keyless records, expired
    tombstones and markers, and aborted records removed (see the module docstring)."""
    return compact_scanned(
        scan(blobs),
        latest,
        now_ms=now_ms,
        delete_retention_ms=delete_retention_ms,
        active_producers=active_producers,
        transactions=transactions,
    )


def compact_scanned(
    batches: Iterable[ScannedBatch],
    latest: KeyOffsets,
    *,
    now_ms: int,
    delete_retention_ms: int,
    active_producers: Mapping[int, LastRecord] | None = None,
    transactions: CleanedTransactions | None = None,
) -> bytes:
    """`compact` over batches already scanned (for the key map, say). Pass the round's one
    `transactions` to every call of a round that comes in pieces."""
    producers = active_producers or {}
    seen = transactions or CleanedTransactions()
    out: list[bytes] = []
    for batch in batches:
        discardable = seen.discardable(batch)
        if batch.header.is_control:
            kept = _clean_marker(batch, discardable, now_ms, delete_retention_ms)
        else:
            kept = _clean_batch(batch, latest, now_ms, delete_retention_ms, discardable)
        if kept is None:  # no record left
            kept = _empty_header(batch.header) if _retains_empty(batch.header, producers) else b""
        out.append(kept)
    return b"".join(out)


def _retains_empty(header: BatchHeader, producers: Mapping[int, LastRecord]) -> bool:
    """LogCleaner's RETAIN_EMPTY for an active producer: a batch kept as an empty header if it
    loses every record. Its last data batch holds its last sequence; without one (an epoch
    bumped by a marker), its marker of that epoch holds the epoch that fences it."""
    last = producers.get(header.producer_id) if header.has_producer_id else None
    if last is None:
        return False
    if last.last_data_offset is None:
        return header.is_control and header.producer_epoch == last.producer_epoch
    return header.last_offset == last.last_data_offset


def _clean_marker(
    batch: ScannedBatch, discardable: bool, now_ms: int, delete_retention_ms: int
) -> bytes | None:
    """The marker, stamped with a delete horizon when it first becomes removable; None once
    that horizon has passed (or an earlier round emptied it). The wait of delete.retention.ms
    lets a read_committed consumer part way through the transaction still meet it."""
    blob, header, _ = batch
    horizon = header.base_timestamp if header.attributes & DELETE_HORIZON_FLAG else None
    if header.records_count == 0 or (discardable and horizon is not None and now_ms >= horizon):
        return None
    if discardable and horizon is None:
        return _rebuild(header, decode_batch(blob, header).records, now_ms + delete_retention_ms)
    return blob[header.position : header.end]


def _clean_batch(
    batch: ScannedBatch,
    latest: KeyOffsets,
    now_ms: int,
    delete_retention_ms: int,
    aborted: bool,
) -> bytes | None:
    """The batch with what survives (see the module docstring); None when nothing does."""
    # Which records survive is decided from keys and null values alone; only a batch
    # that loses some but not all of its records is decoded whole and re-encoded.
    blob, header, scanned = batch
    horizon = header.base_timestamp if header.attributes & DELETE_HORIZON_FLAG else None
    tombstones_expired = horizon is not None and now_ms >= horizon
    kept: list[bool] = []
    kept_tombstone = False
    for offset, key, value in scanned:
        expired = value is None and tombstones_expired
        keep = not aborted and key is not None and offset >= latest.get(key, -1) and not expired
        kept.append(keep)
        kept_tombstone = kept_tombstone or (keep and value is None)
    needs_horizon = horizon is None and kept_tombstone
    kept_count = sum(kept)
    if kept_count == len(kept) and kept_count and not needs_horizon:
        return blob[header.position : header.end]
    if kept_count:
        if needs_horizon:
            horizon = now_ms + delete_retention_ms
        records = decode_batch(blob, header).records
        return _rebuild(header, list(compress_by(records, kept)), horizon)
    return None


def _rebuild(header: BatchHeader, records: list[Record], horizon: int | None) -> bytes:
    attributes = header.attributes
    if horizon is not None:
        attributes |= DELETE_HORIZON_FLAG
    return encode_batch(
        records,
        base_offset=header.base_offset,
        attributes=attributes,
        base_timestamp=horizon,
        # LogAppendTime batches report their append time as every record's timestamp.
        max_timestamp=header.max_timestamp if header.is_log_append_time else None,
        last_offset_delta=header.last_offset_delta,
        producer_id=header.producer_id,
        producer_epoch=header.producer_epoch,
        base_sequence=header.base_sequence,
        partition_leader_epoch=header.partition_leader_epoch,
    )


def _empty_header(header: BatchHeader) -> bytes:
    """Kafka's DefaultRecordBatch.writeEmptyHeader: no records, the producer's state kept."""
    return encode_batch(
        [],
        base_offset=header.base_offset,
        attributes=header.attributes & ~COMPRESSION_MASK & ~DELETE_HORIZON_FLAG,
        base_timestamp=header.max_timestamp,
        max_timestamp=header.max_timestamp,
        last_offset_delta=header.last_offset_delta,
        producer_id=header.producer_id,
        producer_epoch=header.producer_epoch,
        base_sequence=header.base_sequence,
        partition_leader_epoch=header.partition_leader_epoch,
    )
