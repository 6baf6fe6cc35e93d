"""Compaction against Kafka's contract, not against a second copy of the code.

The contract (Kafka's documentation, design.html "Log Compaction", and its LogCleaner /
LogCleanerManager / MemoryRecords.filterTo for what the guarantees leave open):
- a round cleans the segments below the first uncleanable offset (LogCleanerManager.
  cleanableOffsets: the active segment, the last stable offset, min.compaction.lag.ms,
  rounded down to a segment) and its key map covers those segments only (LogCleaner.
  buildOffsetMap), so a record superseded only at or after that offset stays;
- the latest value of every key in the round is retained; a record that is not its key's
  latest (among records that stand: committed or outside transactions) and records without
  a key are removed;
- the offset of a record never changes, order is kept, a rewritten batch keeps its base and
  last offset, producer id, epoch, base sequence, leader epoch, compression and flags;
- a tombstone stays for delete.retention.ms: the first clean stamps its batch with a delete
  horizon of now + delete.retention.ms (KIP-534), a clean at or after it removes it;
- records of aborted transactions are removed and never stand for their keys; a COMMIT or
  ABORT marker stays while the round meets a batch of its transaction, then is stamped with a
  delete horizon as a tombstone is and removed at it (CleanedTransactionMetadata); an
  aborted transaction's range leaves the index once its marker may go;
- a batch left empty is removed, except an active producer's last data batch (or, without
  one in its epoch, its marker), which stays as an empty header (LogCleaner's RETAIN_EMPTY).
The generated logs are checked against these as properties; the expected newest record of
each key comes from the generator's own bookkeeping, and the output is read by
kafka-python's client-side reader (CRCs, offsets and timestamps as a consumer sees them).
Table cases give whole inputs and outputs literally, and one scenario runs through the disk
cleaner and the in-memory log alike.
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from kafka.record.default_records import DefaultRecordBatch
from kafka.record.memory_records import MemoryRecords

from kafka_shim.protocol.record_codec import DELETE_HORIZON_FLAG, GZIP, NONE, Record, encode_batch
from kafka_shim.protocol.records import (
    CONTROL_FLAG,
    TIMESTAMP_TYPE_LOG_APPEND,
    TRANSACTIONAL_FLAG,
    RecordBatches,
)
from kafka_shim.storage.cleaner import clean
from kafka_shim.storage.compaction import (
    CleanedTransactions,
    TransactionFilter,
    add_latest_offsets,
    compact,
    scan,
)
from kafka_shim.storage.disk_log import DiskLog
from kafka_shim.storage.log import AbortedTransaction, PartitionLog
from kafka_shim.storage.log_config import LogConfig
from kafka_shim.storage.memory import MemoryLog
from kafka_shim.storage.producer_state import LastRecord
from kafka_shim.storage.txn_index import AbortedTxn
from tests.storage.logs import options

DAY = 86_400_000  # delete.retention.ms, Kafka's default
NOW = 10 * DAY
IDEMPOTENT = 5
TRANSACTIONAL = (9, 10)


def marker(
    offset: int, producer_id: int, commit: bool, timestamp: int = 0, horizon: int | None = None
) -> bytes:
    """A transaction marker as Kafka's spec lays out a control record: key (version 0,
    type 0 ABORT / 1 COMMIT), value (version 0, coordinator epoch); with `horizon`, as a
    clean stamped it (DefaultRecordBatch: attribute bit 0x40, the horizon in baseTimestamp)."""
    key = struct.pack(">hh", 0, 1 if commit else 0)
    value = struct.pack(">hi", 0, 0)
    stamp: dict[str, int] = {} if horizon is None else {"base_timestamp": horizon}
    return encode_batch(
        [Record(offset, timestamp, key, value)],
        attributes=CONTROL_FLAG | TRANSACTIONAL_FLAG | (0 if horizon is None else DELETE_HORIZON_FLAG),
        producer_id=producer_id,
        producer_epoch=0,
        **stamp,
    )


# --- what a consumer reads (kafka-python) ------------------------------------------------


class Seen(NamedTuple):
    base: int
    last: int
    producer_id: int
    records: tuple[tuple[int, bytes | None, bytes | None], ...]  # offset, key, value
    horizon: int | None  # the delete horizon stamped on the batch
    control: bool


def read(data: bytes) -> list[tuple[DefaultRecordBatch, list[tuple[int, int, bytes | None, bytes | None]]]]:
    """Each batch, with (offset, timestamp, key, value) of its records (none for markers)."""
    out = []
    reader = MemoryRecords(data)
    while (b := reader.next_batch()) is not None:
        assert isinstance(b, DefaultRecordBatch) and b.validate_crc()
        records = [] if b.is_control_batch else [(r.offset, r.timestamp, r.key, r.value) for r in b]
        out.append((b, records))
    return out


def consumer_view(data: bytes) -> list[Seen]:
    return [
        Seen(
            b.base_offset,
            b.last_offset,
            b.producer_id,
            tuple((offset, key, value) for offset, _, key, value in records),
            b.first_timestamp if b.attributes & DELETE_HORIZON_FLAG else None,
            b.is_control_batch,
        )
        for b, records in read(data)
    ]


def identity(b: DefaultRecordBatch) -> tuple[Any, ...]:
    """What compaction must keep of a batch it rewrites (and its compression, unless it is
    left an empty header: Kafka's DefaultRecordBatch.writeEmptyHeader writes none)."""
    return (
        b.base_offset,
        b.last_offset,
        b.producer_id,
        b.producer_epoch,
        b.base_sequence,
        b.leader_epoch,
        b.timestamp_type,
        b.is_transactional,
        b.is_control_batch,
    )


def first_offset(blob: bytes) -> int:
    return int(MemoryRecords(blob).next_batch().base_offset)


# --- generated logs ----------------------------------------------------------------------


class Rec(NamedTuple):
    offset: int
    timestamp: int
    key: bytes | None
    value: bytes | None
    batch: int  # index of its batch in the log
    producer_id: int
    transaction: int | None  # which transaction (its first offset), if any


@dataclass
class Log:
    """A log and what the generator knows of it, independent of the code under test."""

    blobs: list[bytes] = field(default_factory=list)
    records: list[Rec] = field(default_factory=list)
    horizons: dict[int, int] = field(default_factory=dict)  # batch index -> delete horizon it carries
    markers: dict[int, int] = field(default_factory=dict)  # marker batch index -> its transaction
    aborted: list[AbortedTxn] = field(default_factory=list)
    aborted_transactions: set[int] = field(default_factory=set)
    open: dict[int, int] = field(default_factory=dict)  # producer id -> its open transaction
    # producer -> (index, last offset) of its last data batch: Kafka's LastRecord.lastDataOffset
    last_data: dict[int, tuple[int, int]] = field(default_factory=dict)
    sequences: dict[int, int] = field(default_factory=dict)
    end: int = 0

    @property
    def stable_offset(self) -> int:
        return min(self.open.values(), default=self.end)

    def stands(self, rec: Rec) -> bool:
        batch_base = min(r.offset for r in self.records if r.batch == rec.batch)
        return batch_base < self.stable_offset and rec.transaction not in self.aborted_transactions

    def newest(self, below: int) -> dict[bytes, Rec]:
        """The latest standing record of each key in the batches before index `below`."""
        newest: dict[bytes, Rec] = {}
        for rec in self.records:
            if rec.batch < below and rec.key is not None and self.stands(rec):
                newest[rec.key] = rec
        return newest

    def transaction_of(self, base_offset: int) -> int | None:
        """The transaction of the data batch written at `base_offset`, if any."""
        return next((r.transaction for r in self.records if r.offset >= base_offset), None)


_key = st.one_of(st.none(), st.sampled_from([b"a", b"b", b"c", b"d" * 70]))
_value = st.one_of(st.none(), st.sampled_from([b"", b"1", b"v" * 200]))
_data = st.tuples(
    st.just("data"),
    st.lists(st.tuples(_key, _value), min_size=1, max_size=5),
    st.sampled_from([-1, IDEMPOTENT, *TRANSACTIONAL]),
    st.sampled_from([NONE, GZIP]),  # the codecs kafka-python reads without extra libraries
    st.sampled_from([None, NOW - 1, NOW + DAY // 2]),  # a delete horizon from an earlier clean
    st.integers(0, 2),  # an offset gap before it (earlier cleans leave gaps)
    st.booleans(),  # LogAppendTime: every record reads the batch's max timestamp
)
_end = st.tuples(st.just("end"), st.sampled_from(TRANSACTIONAL), st.booleans())
_events = st.lists(st.one_of(_data, _data, _end), max_size=14)


def make_log(events: list[tuple[Any, ...]]) -> Log:
    log = Log()
    for event in events:
        index = len(log.blobs)
        if event[0] == "end":
            _, producer, commit = event
            if producer not in log.open:
                continue
            first = log.open.pop(producer)
            log.blobs.append(marker(log.end, producer, commit))
            log.markers[index] = first
            if not commit:
                log.aborted.append(AbortedTxn(producer, first, log.end, log.end + 1))
                log.aborted_transactions.add(first)
            log.end += 1
            continue
        _, kvs, producer, codec, horizon, gap, log_append_time = event
        log.end += gap
        records = [Record(log.end + i, 1_000 + log.end + i, k, v) for i, (k, v) in enumerate(kvs)]
        fields: dict[str, Any] = {"attributes": codec, "producer_id": producer, "partition_leader_epoch": 3}
        if log_append_time:
            fields.update(attributes=codec | TIMESTAMP_TYPE_LOG_APPEND, max_timestamp=5_000 + log.end)
            records = [r._replace(timestamp=5_000 + log.end) for r in records]
        transaction = None
        if producer >= 0:
            fields.update(producer_epoch=0, base_sequence=log.sequences.get(producer, 0))
            log.sequences[producer] = fields["base_sequence"] + len(records)
        if producer in TRANSACTIONAL:
            fields["attributes"] |= TRANSACTIONAL_FLAG
            transaction = log.open.setdefault(producer, log.end)
        if horizon is not None:
            fields.update(attributes=fields["attributes"] | DELETE_HORIZON_FLAG, base_timestamp=horizon)
            log.horizons[index] = horizon
        log.blobs.append(encode_batch(records, **fields))
        log.records += [
            Rec(r.offset, r.timestamp, r.key, r.value, index, producer, transaction) for r in records
        ]
        if producer >= 0:
            log.last_data[producer] = (index, records[-1].offset)
        log.end += len(records)
    return log


@settings(max_examples=150, deadline=None)
@given(_events, st.integers(0, 14))
def test_compaction_keeps_kafkas_guarantees(events: list[tuple[Any, ...]], split: int) -> None:
    log = make_log(events)
    # A round cleans whole batches below the first uncleanable offset (closed segments below
    # the last stable offset), and only they make the key map; the rest is the head.
    cleanable = [i for i, blob in enumerate(log.blobs) if first_offset(blob) < log.stable_offset]
    closed_count = min(split, len(cleanable))
    closed = log.blobs[:closed_count]
    newest = log.newest(below=closed_count)
    producers = {p: LastRecord(last, 0) for p, (_, last) in log.last_data.items()}
    last_data = {last for _, last in log.last_data.values()}

    def run(blobs: list[bytes], now: int, aborted: list[AbortedTxn]) -> tuple[bytes, set[int]]:
        """One round over `blobs`; its output and the ABORT markers whose ranges it empties."""
        round_ = CleanedTransactions(TransactionFilter(aborted, log.stable_offset))
        latest = add_latest_offsets({}, scan(blobs), round_.filter)
        if blobs == closed:
            assert latest == {key: rec.offset for key, rec in newest.items()}
        out = compact(
            blobs,
            latest,
            now_ms=now,
            delete_retention_ms=DAY,
            active_producers=producers,
            transactions=round_,
        )
        return out, round_.emptied_aborts

    cleaned, emptied = run(closed, NOW, log.aborted)
    seen = consumer_view(cleaned)
    before = {b.base_offset: (i, b) for i, blob in enumerate(closed) for b, _ in read(blob)}
    by_offset = {rec.offset: rec for rec in log.records}

    # Offsets never change and order is kept: each batch is one of the input's, itself,
    # and each record is the one written at its offset, as a consumer reads it.
    assert [s.base for s in seen] == sorted(s.base for s in seen)
    for out, records in read(cleaned):
        index, original = before[out.base_offset]
        assert identity(out) == identity(original)
        assert out.compression_type == (original.compression_type if out.records_count else NONE)
        for offset, timestamp, key, value in records:
            rec = by_offset[offset]
            assert (timestamp, key, value, rec.batch) == (rec.timestamp, rec.key, rec.value, index)

    kept = {offset for s in seen for offset, _, _ in s.records}
    horizon_of = {offset: s.horizon for s in seen for offset, _, _ in s.records}
    for offset in kept:
        rec = by_offset[offset]
        # Only a key's latest standing record in the round is kept; never a keyless or aborted one.
        assert rec.key is not None and newest.get(rec.key) == rec
        if rec.value is None:  # a tombstone, until its horizon
            horizon = log.horizons.get(rec.batch, NOW + DAY)
            assert horizon_of[offset] == horizon > NOW
    for rec in newest.values():
        if rec.offset not in kept:
            # The latest value is retained; only a tombstone whose horizon passed goes.
            assert rec.value is None and log.horizons.get(rec.batch, NOW + DAY) <= NOW

    # Every marker's transaction has its batches before it in the round: all stay as they were.
    markers = {s.base: s for s in seen if s.control}
    assert sorted(markers) == sorted(first_offset(closed[i]) for i in log.markers if i < closed_count)
    assert all(s.horizon is None for s in markers.values()) and not emptied
    # An active producer's last data batch stays; nothing else is left empty.
    for index, last in log.last_data.values():
        if index < closed_count:
            assert last in {s.last for s in seen}
    assert all(s.records or s.control or s.last in last_data for s in seen)

    # The next round finds the markers whose transactions have no batch left: stamped with
    # now + delete.retention.ms, their aborted ranges gone from the index.
    again, emptied = run([cleaned], NOW, log.aborted)
    left = {(s.producer_id, log.transaction_of(s.base)) for s in seen if not s.control}
    expected_stamps = {
        base: None if (s.producer_id, log.markers[before[base][0]]) in left else NOW + DAY
        for base, s in markers.items()
    }
    assert {s.base: s.horizon for s in consumer_view(again) if s.control} == expected_stamps
    aborted_markers = {e.last_offset for e in log.aborted}
    assert emptied == {
        base for base, h in expected_stamps.items() if h is not None and base in aborted_markers
    }
    # Then nothing changes until the horizons pass.
    remaining = [e for e in log.aborted if e.last_offset not in emptied]
    assert run([again], NOW, remaining)[0] == again
    # At them, stamped tombstones and markers go.
    later = consumer_view(run([again], NOW + DAY, remaining)[0])
    assert not any(value is None for s in later for _, _, value in s.records)
    assert {o for s in later for o, _, v in s.records} == {o for o in kept if by_offset[o].value is not None}
    assert {s.base for s in later if s.control} == {b for b, h in expected_stamps.items() if h is None}


# --- literal cases -----------------------------------------------------------------------


def plain(base: int, *kv: tuple[bytes | None, bytes | None], **fields: Any) -> bytes:
    return encode_batch([Record(base + i, 1_000 + base + i, k, v) for i, (k, v) in enumerate(kv)], **fields)


def txn(base: int, producer: int, *kv: tuple[bytes | None, bytes | None]) -> bytes:
    return plain(
        base, *kv, attributes=TRANSACTIONAL_FLAG, producer_id=producer, producer_epoch=0, base_sequence=0
    )


class Table(NamedTuple):
    name: str
    log: tuple[bytes, ...]
    aborted: tuple[AbortedTxn, ...]
    cleaned: int  # how many batches lie below the first uncleanable offset (the round)
    expected: tuple[Seen, ...]
    stable_offset: int | None = None  # the last stable offset (None: the log end)
    producers: tuple[tuple[int, LastRecord], ...] = ()  # the active producers' LastRecord
    emptied_aborts: frozenset[int] = frozenset()  # ABORT markers whose ranges leave the index


IDEMPOTENT_FIELDS = {"producer_id": IDEMPOTENT, "producer_epoch": 0, "base_sequence": 0}
# The rows follow Kafka's LogCleaner (doClean, buildOffsetMap, cleanInto's RecordFilter:
# shouldRetainRecord, isBatchLastRecordOfProducer), CleanedTransactionMetadata
# (onBatchRead, onControlBatchRead) and MemoryRecords.filterTo (needToSetDeleteHorizon).
TABLE = (
    Table(
        "latest value per key, offsets kept",
        (plain(0, (b"a", b"1"), (b"b", b"1"), (b"a", b"2")), plain(3, (b"b", b"2"))),
        (),
        2,
        (Seen(0, 2, -1, ((2, b"a", b"2"),), None, False), Seen(3, 3, -1, ((3, b"b", b"2"),), None, False)),
    ),
    Table(
        # buildOffsetMap(log, firstDirtyOffset, firstUncleanableOffset): nothing after the
        # round supersedes, so a=1 stays until the batch holding a=2 is in a round.
        "a record superseded only after the round stays",
        (plain(0, (b"a", b"1"), (b"b", b"1")), plain(2, (b"a", b"2"))),
        (),
        1,
        (Seen(0, 1, -1, ((0, b"a", b"1"), (1, b"b", b"1")), None, False),),
    ),
    Table(
        "keyless records dropped",
        (plain(0, (None, b"x"), (b"k", b"v")),),
        (),
        1,
        (Seen(0, 1, -1, ((1, b"k", b"v"),), None, False),),
    ),
    Table(
        "a tombstone is stamped with now + delete.retention.ms",
        (plain(0, (b"a", b"1"), (b"a", None)),),
        (),
        1,
        (Seen(0, 1, -1, ((1, b"a", None),), NOW + DAY, False),),
    ),
    Table(
        "a tombstone past its horizon goes, and its batch with it",
        (plain(0, (b"a", None), attributes=DELETE_HORIZON_FLAG, base_timestamp=NOW), plain(1, (b"b", b"1"))),
        (),
        2,
        (Seen(1, 1, -1, ((1, b"b", b"1"),), None, False),),
    ),
    Table(
        "an active producer's last data batch stays as an empty header",
        (plain(0, (b"a", b"1"), **IDEMPOTENT_FIELDS), plain(1, (b"a", b"2"))),
        (),
        2,
        (Seen(0, 0, IDEMPOTENT, (), None, False), Seen(1, 1, -1, ((1, b"a", b"2"),), None, False)),
        producers=((IDEMPOTENT, LastRecord(0, 0)),),
    ),
    Table(
        "an aborted batch goes and supersedes nothing; its marker stays while the round met it",
        (plain(0, (b"a", b"1")), txn(1, 9, (b"a", b"2")), marker(2, 9, commit=False), plain(3, (b"z", b"1"))),
        (AbortedTxn(9, 1, 2, 3),),
        3,
        (Seen(0, 0, -1, ((0, b"a", b"1"),), None, False), Seen(2, 2, 9, (), None, True)),
    ),
    Table(
        "an aborted batch that is its active producer's last stays empty, and so does its marker",
        (plain(0, (b"a", b"1")), txn(1, 9, (b"a", b"2")), marker(2, 9, commit=False)),
        (AbortedTxn(9, 1, 2, 3),),
        3,
        (
            Seen(0, 0, -1, ((0, b"a", b"1"),), None, False),
            Seen(1, 1, 9, (), None, False),
            Seen(2, 2, 9, (), None, True),
        ),
        producers=((9, LastRecord(1, 0)),),
    ),
    Table(
        "a committed record supersedes",
        (plain(0, (b"a", b"1")), txn(1, 9, (b"a", b"2")), marker(2, 9, commit=True), plain(3, (b"z", b"1"))),
        (),
        3,
        (Seen(1, 1, 9, ((1, b"a", b"2"),), None, False), Seen(2, 2, 9, (), None, True)),
    ),
    Table(
        "a COMMIT marker stays while the round meets its transaction's batch, even one it empties",
        (txn(0, 9, (b"a", b"1")), marker(1, 9, commit=True), plain(2, (b"a", b"2"))),
        (),
        3,
        (Seen(1, 1, 9, (), None, True), Seen(2, 2, -1, ((2, b"a", b"2"),), None, False)),
    ),
    Table(
        "a COMMIT marker whose transaction has no batch left is stamped with now + delete.retention.ms",
        (marker(1, 9, commit=True), plain(2, (b"a", b"2"))),
        (),
        2,
        (Seen(1, 1, 9, (), NOW + DAY, True), Seen(2, 2, -1, ((2, b"a", b"2"),), None, False)),
    ),
    Table(
        "an ABORT marker whose transaction has no batch left is stamped; its range leaves the index",
        (plain(0, (b"a", b"1")), marker(2, 9, commit=False)),
        (AbortedTxn(9, 1, 2, 3),),
        2,
        (Seen(0, 0, -1, ((0, b"a", b"1"),), None, False), Seen(2, 2, 9, (), NOW + DAY, True)),
        emptied_aborts=frozenset({2}),
    ),
    Table(
        "a marker past its delete horizon goes",
        (marker(1, 9, commit=True, horizon=NOW), plain(2, (b"a", b"2"))),
        (),
        2,
        (Seen(2, 2, -1, ((2, b"a", b"2"),), None, False),),
    ),
    Table(
        "a marker not yet at its delete horizon stays as it is",
        (marker(1, 9, commit=False, horizon=NOW + 1), plain(2, (b"a", b"2"))),
        (),
        2,
        (Seen(1, 1, 9, (), NOW + 1, True), Seen(2, 2, -1, ((2, b"a", b"2"),), None, False)),
        emptied_aborts=frozenset({1}),
    ),
    Table(
        "past its horizon, the marker of an active producer without data in its epoch stays empty",
        (marker(1, 9, commit=True, horizon=NOW), plain(2, (b"a", b"2"))),
        (),
        2,
        (Seen(1, 1, 9, (), None, True), Seen(2, 2, -1, ((2, b"a", b"2"),), None, False)),
        producers=((9, LastRecord(None, 0)),),
    ),
    Table(
        "an open transaction supersedes nothing and is not cleaned",
        (plain(0, (b"a", b"1")), txn(1, 9, (b"a", b"2"))),
        (),
        1,
        (Seen(0, 0, -1, ((0, b"a", b"1"),), None, False),),
        stable_offset=1,
    ),
)


@pytest.mark.parametrize("case", TABLE, ids=lambda c: c.name)
def test_compaction_table(case: Table) -> None:
    end = read(case.log[-1])[-1][0].last_offset + 1
    round_ = CleanedTransactions(
        TransactionFilter(case.aborted, end if case.stable_offset is None else case.stable_offset)
    )
    cleanable = case.log[: case.cleaned]
    cleaned = compact(
        cleanable,
        add_latest_offsets({}, scan(cleanable), round_.filter),
        now_ms=NOW,
        delete_retention_ms=DAY,
        active_producers=dict(case.producers),
        transactions=round_,
    )
    assert tuple(consumer_view(cleaned)) == case.expected
    assert round_.emptied_aborts == case.emptied_aborts


# --- one scenario through the disk cleaner and the in-memory log -------------------------


def one_segment_per_batch(kind: str, tmp_path: Path) -> tuple[PartitionLog, Callable[[int], object]]:
    """A compacted log whose every append rolls the segment before it, and its cleaner."""
    config = LogConfig(segment_bytes=1, cleanup_policy=frozenset({"compact"}))
    if kind == "disk":
        disk = DiskLog.create(tmp_path / "t-0", config, options())
        return disk, lambda now: clean(disk, now)
    memory = MemoryLog()
    memory.config = config
    return memory, memory.clean


@pytest.mark.parametrize("kind", ["disk", "memory"])
def test_a_round_stops_at_the_active_segment_and_markers_go_after_delete_retention(
    kind: str, tmp_path: Path
) -> None:
    log, clean_at = one_segment_per_batch(kind, tmp_path)

    def put(key: bytes, value: bytes, producer_id: int | None = None) -> None:
        batch = plain(0, (key, value)) if producer_id is None else txn(0, producer_id, (key, value))
        log.append(RecordBatches.parse(batch))

    def view() -> list[tuple[int, tuple[tuple[int, bytes | None, bytes | None], ...], int | None, bool]]:
        return [(s.base, s.records, s.horizon, s.control) for s in consumer_view(log.read(0, 1 << 20))]

    put(b"a", b"1")
    put(b"a", b"2")  # the active segment
    clean_at(NOW)
    # LogCleanerManager.cleanableOffsets: the active segment is uncleanable, and
    # LogCleaner.buildOffsetMap maps only below it, so a=1 stays until a=2's segment rolls.
    assert view() == [(0, ((0, b"a", b"1"),), None, False), (1, ((1, b"a", b"2"),), None, False)]

    put(b"b", b"1", producer_id=9)
    log.write_txn_marker(9, 0, True, 0, NOW)
    put(b"b", b"2")
    put(b"c", b"1", producer_id=10)
    log.write_txn_marker(10, 0, False, 0, NOW)
    put(b"z", b"1")  # the active segment
    log.producers.expire(NOW, 0)  # producer.id.expiration.ms passed: no batch is kept for them
    clean_at(NOW)
    # b=1 is superseded, c=1 aborted: both go; their markers stay, the round having met them.
    assert view() == [
        (1, ((1, b"a", b"2"),), None, False),
        (3, (), None, True),
        (4, ((4, b"b", b"2"),), None, False),
        (6, (), None, True),
        (7, ((7, b"z", b"1"),), None, False),
    ]
    assert log.aborted_transactions(0, log.log_end_offset) == [AbortedTransaction(10, 5)]

    clean_at(NOW)  # no batch of either transaction is left: delete horizons, the range goes
    assert [(base, horizon) for base, _, horizon, control in view() if control] == [
        (3, NOW + DAY),
        (6, NOW + DAY),
    ]
    assert log.aborted_transactions(0, log.log_end_offset) == []
    clean_at(NOW + DAY - 1)
    assert [base for base, *_ in view()] == [1, 3, 4, 6, 7]
    clean_at(NOW + DAY)
    assert view() == [
        (1, ((1, b"a", b"2"),), None, False),
        (4, ((4, b"b", b"2"),), None, False),
        (7, ((7, b"z", b"1"),), None, False),
    ]


def test_the_disk_cleaner_never_touches_the_active_segment(tmp_path: Path) -> None:
    one = len(plain(0, (b"a", b"0")))
    log = DiskLog.create(
        tmp_path / "t-0", LogConfig(segment_bytes=2 * one, cleanup_policy=frozenset({"compact"})), options()
    )
    for number in range(7):  # segments [0,1] [2,3] [4,5] closed, [6] active
        log.append(RecordBatches.parse(plain(0, (b"a", b"%d" % number))))
    active = log.active.log_path.read_bytes()
    assert clean(log, now_ms=NOW) == 3
    assert log.active.log_path.read_bytes() == active
    # The round's key map ends at the active segment: a=5 is the newest it knows.
    assert [s.records for s in consumer_view(log.read(0, 1 << 20))] == [
        ((5, b"a", b"5"),),
        ((6, b"a", b"6"),),
    ]
