"""Log compaction (cleanup.policy=compact) as pure functions over record batches,
following Kafka's LogCleaner / MemoryRecords.filterTo. No I/O, no clock.

The two calls a cleaner makes:

    latest = latest_offsets(blobs)
        blobs: Iterable[bytes], each a run of whole v2 batches (e.g. one segment),
        covering the segments to clean AND every later one (the active segment too).
        Returns {key: offset of its newest record} (Kafka's OffsetMap).

    cleaned = compact(blobs, latest, now_ms=..., delete_retention_ms=...,
                      producer_last_offsets={producer id: last data offset})
        blobs: the closed segments to clean, oldest first.
        Returns bytes: the surviving batches, back to back, ready for
        DiskLog.replace_segments. Every offset kept keeps its number (gaps allowed).

A cleaner that walks the log in steps (MemoryLog) scans each batch once with
`scan` and feeds the same `ScannedBatch`es to `add_latest_offsets`,
`add_producer_last_offsets` and `compact_scanned`; the two calls above are
those over one streaming scan each.

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
  last sequence still lines up. A batch left with no records disappears,
  except the last batch of an active producer (`producer_last_offsets`), which
  stays as an empty header remembering its sequence.
- Transactions (`TransactionFilter`): records of aborted transactions never stand
  for their keys and are dropped, as Kafka's cleaner discards them; records at or
  after the last stable offset (a transaction still open may yet abort) are not in
  the key map, and the cleaner cleans only below that offset. Control batches
  (COMMIT/ABORT markers) are kept, so aborted ranges stay whole for read_committed.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterable, Iterator, Mapping
from itertools import compress as compress_by
from typing import NamedTuple, Protocol

from kafka_shim.protocol.record_codec import (
    DELETE_HORIZON_FLAG,
    Record,
    batch_keyed_records,
    decode_batch,
    encode_batch,
)
from kafka_shim.protocol.records import COMPRESSION_MASK, BatchHeader, iter_headers
from kafka_shim.storage.txn_index import AbortedTxn


class KeyOffsets(Protocol):
    """The newest offset of each key: a dict, or the disk cleaner's bounded OffsetMap."""

    def get(self, key: bytes, default: int, /) -> int: ...


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


def producer_last_offsets(blobs: Iterable[bytes]) -> dict[int, int]:
    """The last offset of every producer's last batch (pass the whole log): the batch
    compaction keeps, if only as an empty header, to remember the producer's sequence."""
    return add_producer_last_offsets({}, (h for blob in blobs for h in iter_headers(blob)))


def add_producer_last_offsets(last: dict[int, int], headers: Iterable[BatchHeader]) -> dict[int, int]:
    for header in headers:
        if header.has_producer_id:
            last[header.producer_id] = header.last_offset
    return last


def compact(
    blobs: Iterable[bytes],
    latest: KeyOffsets,
    *,
    now_ms: int,
    delete_retention_ms: int,
    producer_last_offsets: Mapping[int, int] | None = None,
    transactions: TransactionFilter | None = None,
) -> bytes:
    """The batches of `blobs` with superseded records, keyless records, expired
    tombstones and aborted records removed (see the module docstring)."""
    return compact_scanned(
        scan(blobs),
        latest,
        now_ms=now_ms,
        delete_retention_ms=delete_retention_ms,
        producer_last_offsets=producer_last_offsets,
        transactions=transactions,
    )


def compact_scanned(
    batches: Iterable[ScannedBatch],
    latest: KeyOffsets,
    *,
    now_ms: int,
    delete_retention_ms: int,
    producer_last_offsets: Mapping[int, int] | None = None,
    transactions: TransactionFilter | None = None,
) -> bytes:
    """`compact` over batches already scanned (for the key map, say)."""
    last_offsets = producer_last_offsets or {}
    out: list[bytes] = []
    for batch in batches:
        if batch.header.is_control:
            out.append(batch.blob[batch.header.position : batch.header.end])
        else:
            aborted = transactions is not None and transactions.aborted(batch.header)
            out.append(_clean_batch(batch, latest, now_ms, delete_retention_ms, last_offsets, aborted))
    return b"".join(out)


def _clean_batch(
    batch: ScannedBatch,
    latest: KeyOffsets,
    now_ms: int,
    delete_retention_ms: int,
    producer_last_offsets: Mapping[int, int],
    aborted: bool,
) -> bytes:
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
    if kept_count == len(kept) and not needs_horizon:
        return blob[header.position : header.end]
    if kept_count:
        if needs_horizon:
            horizon = now_ms + delete_retention_ms
        records = decode_batch(blob, header).records
        return _rebuild(header, list(compress_by(records, kept)), horizon)
    if header.has_producer_id and producer_last_offsets.get(header.producer_id) == header.last_offset:
        return _empty_header(header)
    return b""


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
