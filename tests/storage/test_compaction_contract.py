"""Compaction against Kafka's contract, not against a second copy of the code.

The contract (Kafka's documentation, design.html "Log Compaction", and its LogCleaner /
MemoryRecords.filterTo for what the guarantees leave open):
- the latest value of every key is retained; a record that is not its key's latest (among
  records that stand: committed or outside transactions, below the last stable offset) and
  records without a key are removed;
- the offset of a record never changes, order is kept, a rewritten batch keeps its base and
  last offset, producer id, epoch, base sequence, leader epoch, compression and flags;
- a tombstone stays for delete.retention.ms: the first clean stamps its batch with a delete
  horizon of now + delete.retention.ms (KIP-534), a clean at or after it removes it;
- records of aborted transactions are removed, never stand for their keys, and a record of
  a transaction still open (at or after the last stable offset) supersedes nothing; a
  transaction marker stays while any record of its transaction does;
- a batch left empty is removed, except an active producer's last batch, which stays as an
  empty header (LogCleaner's RETAIN_EMPTY) so its sequence is remembered;
- the active segment is never cleaned (the disk log's cleaner; the in-memory log has no
  segments and documents that it cleans every batch).
The generated logs are checked against these as properties; the expected newest record of
each key comes from the generator's own bookkeeping, and the output is read by
kafka-python's client-side reader (CRCs, offsets and timestamps as a consumer sees them).
A few table cases give whole inputs and outputs literally.
"""

from __future__ import annotations

import struct
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
    TransactionFilter,
    add_latest_offsets,
    compact,
    producer_last_offsets,
    scan,
)
from kafka_shim.storage.txn_index import AbortedTxn
from tests.storage.logs import disk_log

DAY = 86_400_000  # delete.retention.ms, Kafka's default
NOW = 10 * DAY
IDEMPOTENT = 5
TRANSACTIONAL = (9, 10)


def marker(offset: int, producer_id: int, commit: bool, timestamp: int = 0) -> bytes:
    """A transaction marker as Kafka's spec lays out a control record: key (version 0,
    type 0 ABORT / 1 COMMIT), value (version 0, coordinator epoch)."""
    key = struct.pack(">hh", 0, 1 if commit else 0)
    value = struct.pack(">hi", 0, 0)
    return encode_batch(
        [Record(offset, timestamp, key, value)],
        attributes=CONTROL_FLAG | TRANSACTIONAL_FLAG,
        producer_id=producer_id,
        producer_epoch=0,
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
    last_batch: dict[int, tuple[int, int]] = field(default_factory=dict)  # producer -> (index, last offset)
    sequences: dict[int, int] = field(default_factory=dict)
    end: int = 0

    @property
    def stable_offset(self) -> int:
        return min(self.open.values(), default=self.end)

    def stands(self, rec: Rec) -> bool:
        batch_base = min(r.offset for r in self.records if r.batch == rec.batch)
        return batch_base < self.stable_offset and rec.transaction not in self.aborted_transactions

    def newest(self) -> dict[bytes, Rec]:
        newest: dict[bytes, Rec] = {}
        for rec in self.records:
            if rec.key is not None and self.stands(rec):
                newest[rec.key] = rec
        return newest


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
            log.last_batch[producer] = (index, log.end)
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
            log.last_batch[producer] = (index, records[-1].offset)
        log.end += len(records)
    return log


@settings(max_examples=150, deadline=None)
@given(_events, st.integers(0, 14))
def test_compaction_keeps_kafkas_guarantees(events: list[tuple[Any, ...]], split: int) -> None:
    log = make_log(events)
    # The cleaner cleans closed segments below the last stable offset; the rest is the head.
    cleanable = [i for i, blob in enumerate(log.blobs) if first_offset(blob) < log.stable_offset]
    closed_count = min(split, len(cleanable))
    closed = log.blobs[:closed_count]
    transactions = TransactionFilter(log.aborted, log.stable_offset)
    latest = add_latest_offsets({}, scan(log.blobs), transactions)
    newest = log.newest()
    assert latest == {key: rec.offset for key, rec in newest.items()}
    producers = producer_last_offsets(log.blobs)
    assert producers == {p: last for p, (_, last) in log.last_batch.items()}

    def run(blobs: list[bytes], now: int) -> bytes:
        return compact(
            blobs,
            latest,
            now_ms=now,
            delete_retention_ms=DAY,
            producer_last_offsets=producers,
            transactions=transactions,
        )

    cleaned = run(closed, NOW)
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
        # Only a key's latest standing record is kept; never a keyless or aborted one.
        assert rec.key is not None and newest.get(rec.key) == rec
        if rec.value is None:  # a tombstone, until its horizon
            horizon = log.horizons.get(rec.batch, NOW + DAY)
            assert horizon_of[offset] == horizon > NOW
    for rec in newest.values():
        if rec.batch < closed_count and rec.offset not in kept:
            # The latest value is retained; only a tombstone whose horizon passed goes.
            assert rec.value is None and log.horizons.get(rec.batch, NOW + DAY) <= NOW

    # A marker stays while its transaction keeps a record; a producer's last batch stays.
    markers = {s.base for s in seen if s.control}
    for index, transaction in log.markers.items():
        if index < closed_count and any(by_offset[o].transaction == transaction for o in kept):
            assert first_offset(closed[index]) in markers
    for index, last in log.last_batch.values():
        if index < closed_count:
            assert last in {s.last for s in seen}
    # Nothing else is left empty.
    last_batches = {last for _, last in log.last_batch.values()}
    assert all(s.records or s.control or s.last in last_batches for s in seen)

    # Cleaning again changes nothing; once every horizon has passed, no tombstone remains.
    assert run([cleaned], NOW) == cleaned
    later = consumer_view(run([cleaned], NOW + DAY))
    assert not any(value is None for s in later for _, _, value in s.records)
    assert {o for s in later for o, _, v in s.records} == {o for o in kept if by_offset[o].value is not None}


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
    cleaned: int  # how many batches are closed and cleanable
    expected: tuple[Seen, ...]
    stable_offset: int | None = None  # the last stable offset (None: the log end)


IDEMPOTENT_FIELDS = {"producer_id": IDEMPOTENT, "producer_epoch": 0, "base_sequence": 0}
TABLE = (
    Table(
        "latest value per key, offsets kept",
        (plain(0, (b"a", b"1"), (b"b", b"1"), (b"a", b"2")), plain(3, (b"b", b"2"))),
        (),
        2,
        (Seen(0, 2, -1, ((2, b"a", b"2"),), None, False), Seen(3, 3, -1, ((3, b"b", b"2"),), None, False)),
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
        "an active producer's last batch stays as an empty header",
        (plain(0, (b"a", b"1"), **IDEMPOTENT_FIELDS), plain(1, (b"a", b"2"))),
        (),
        2,
        (Seen(0, 0, IDEMPOTENT, (), None, False), Seen(1, 1, -1, ((1, b"a", b"2"),), None, False)),
    ),
    Table(
        "an aborted record is dropped and supersedes nothing; its marker stays",
        (plain(0, (b"a", b"1")), txn(1, 9, (b"a", b"2")), marker(2, 9, commit=False), plain(3, (b"z", b"1"))),
        (AbortedTxn(9, 1, 2, 3),),
        3,
        (Seen(0, 0, -1, ((0, b"a", b"1"),), None, False), Seen(2, 2, 9, (), None, True)),
    ),
    Table(
        "a committed record supersedes",
        (plain(0, (b"a", b"1")), txn(1, 9, (b"a", b"2")), marker(2, 9, commit=True), plain(3, (b"z", b"1"))),
        (),
        3,
        (Seen(1, 1, 9, ((1, b"a", b"2"),), None, False), Seen(2, 2, 9, (), None, True)),
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
    transactions = TransactionFilter(case.aborted, end if case.stable_offset is None else case.stable_offset)
    latest = add_latest_offsets({}, scan(case.log), transactions)
    cleaned = compact(
        case.log[: case.cleaned],
        latest,
        now_ms=NOW,
        delete_retention_ms=DAY,
        producer_last_offsets=producer_last_offsets(case.log),
        transactions=transactions,
    )
    assert tuple(consumer_view(cleaned)) == case.expected


# --- the active segment of a disk log ----------------------------------------------------


def test_the_disk_cleaner_never_touches_the_active_segment(tmp_path: Path) -> None:
    one = len(plain(0, (b"a", b"0")))
    log = disk_log(tmp_path / "t-0", segment_bytes=2 * one, cleanup_policy=frozenset({"compact"}))
    for number in range(7):  # segments [0,1] [2,3] [4,5] closed, [6] active
        log.append(RecordBatches.parse(plain(0, (b"a", b"%d" % number))))
    active = log.active.log_path.read_bytes()
    assert clean(log, now_ms=NOW) == 3
    assert log.active.log_path.read_bytes() == active
    assert [s.records for s in consumer_view(log.read(0, 1 << 20))] == [((6, b"a", b"6"),)]
