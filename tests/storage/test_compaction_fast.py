"""The fast paths of the offsets log and of compaction against the general ones (what
compaction keeps is checked against Kafka's contract in test_compaction_contract):

- `build_batch` hands back the header `RecordBatches.parse` reads from its bytes;
- the offsets log's batches, built in place, are byte for byte what encoding,
  parsing and renumbering them in the log (the path before) stores;
- a MemoryLog compaction pass spread over steps equals one pass, keeps what is
  appended meanwhile, and gives way to DeleteRecords.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from kafka_shim.protocol.offsets_records import (
    GroupKey,
    GroupValue,
    MemberValue,
    OffsetKey,
    OffsetsRecord,
    OffsetValue,
    encode_record,
)
from kafka_shim.protocol.record_codec import (
    GZIP,
    LZ4,
    NONE,
    Record,
    build_batch,
    decode_batches,
    encode_batch,
)
from kafka_shim.protocol.records import TIMESTAMP_TYPE_LOG_APPEND, RecordBatches, iter_headers
from kafka_shim.storage.log import LEADER_EPOCH, TimestampOffset
from kafka_shim.storage.memory import MemoryLog
from kafka_shim.storage.offsets_log import OffsetsLog, partition_for
from kafka_shim.storage.topics import TopicStore

DAY = 86_400_000
NOW = 10 * DAY


# --- generated records -------------------------------------------------------------------

_key = st.one_of(st.none(), st.sampled_from([b"a", b"b", b"c", b"d" * 70]))  # 70: a two-byte length
_value = st.one_of(st.none(), st.binary(max_size=3), st.just(b"v" * 200))


# --- batches built with their header -----------------------------------------------------


@settings(max_examples=100, deadline=None)
@given(
    st.lists(st.tuples(_key, _value), max_size=5),
    st.sampled_from([NONE, GZIP, LZ4 | TIMESTAMP_TYPE_LOG_APPEND]),
    st.integers(0, 2**40),
    st.sampled_from([-1, 0, 5]),
)
def test_built_headers_are_what_parsing_reads(
    kvs: list[tuple[bytes | None, bytes | None]], attributes: int, base: int, epoch: int
) -> None:
    records = [Record(base + i, 1_000 + i, k, v) for i, (k, v) in enumerate(kvs)]
    max_timestamp = 9_999 if attributes & TIMESTAMP_TYPE_LOG_APPEND else None
    built = build_batch(
        records,
        base_offset=base,
        attributes=attributes,
        max_timestamp=max_timestamp,
        partition_leader_epoch=epoch,
    )
    assert built == RecordBatches.parse(built.data)
    placed = built.with_base_offset(base, epoch)
    assert placed is built  # already where it goes: nothing rewritten
    assert RecordBatches.parse(built.data).with_base_offset(base, epoch) == built


_offsets_record = st.one_of(
    st.builds(
        OffsetsRecord,
        st.builds(OffsetKey, st.sampled_from(["g", "h", "ü" * 40]), st.just("t"), st.integers(0, 3)),
        st.one_of(
            st.none(),
            st.builds(
                OffsetValue,
                st.integers(0, 2**40),
                st.integers(-1, 5),
                st.text(max_size=80),
                st.integers(0, 2**41),
                st.one_of(st.none(), st.integers(0, 2**41)),
            ),
        ),
    ),
    st.builds(
        OffsetsRecord,
        st.builds(GroupKey, st.sampled_from(["g", "h"])),
        st.one_of(
            st.none(),
            st.builds(
                GroupValue,
                st.just("consumer"),
                st.integers(0, 9),
                st.just("range"),
                st.just("m-1"),
                st.integers(0, 2**41),
                st.just((MemberValue("m-1", None, "c", "/h", 1, 2, b"s", b"a"),)),
            ),
        ),
    ),
).map(
    # builds() would fill the producer fields too: these records are outside any
    # transaction, as the general path below stores them
    lambda record: OffsetsRecord(record.key, record.value)
)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(_offsets_record, min_size=1, max_size=6), max_size=5), st.sampled_from([1, 3]))
def test_offsets_log_batches_are_what_the_general_path_stores(
    appends: list[list[OffsetsRecord]], partitions: int
) -> None:
    log = OffsetsLog(TopicStore(lambda topic, partition: MemoryLog()), partitions)
    expected: dict[int, list[bytes]] = {}
    ends: dict[int, int] = {}
    for n, records in enumerate(appends):
        now = NOW + n
        log.append(records, now)
        # Before: per partition, encode from offset 0, parse back, renumber at the log end.
        by_partition: dict[int, list[Record]] = {}
        for record in records:
            batch = by_partition.setdefault(partition_for(record.group, partitions), [])
            batch.append(Record(len(batch), now, *encode_record(record)))
        for index, batch in by_partition.items():
            parsed = RecordBatches.parse(encode_batch(batch), verify_crc=False)
            placed = parsed.with_base_offset(ends.get(index, 0), LEADER_EPOCH)
            expected.setdefault(index, []).append(placed.data)
            ends[index] = placed.last.last_offset + 1
    topic = log.topic
    for index in range(partitions):
        stored = topic.partitions[index].read(0, 1 << 30) if topic is not None and index in ends else b""
        assert stored == b"".join(expected.get(index, []))


# --- MemoryLog passes in steps -----------------------------------------------------------


def memory_log(blobs: list[bytes]) -> MemoryLog:
    log = MemoryLog()
    for blob in blobs:
        log.append(RecordBatches.parse(blob))
    return log


def everything(log: MemoryLog) -> bytes:
    return log.read(log.log_start_offset, 1 << 30) if log.log_end_offset > log.log_start_offset else b""


_kv_batches = st.lists(st.lists(st.tuples(_key, _value), min_size=1, max_size=4), max_size=15)


def kv_blobs(batches: list[list[tuple[bytes | None, bytes | None]]], start: int = 0) -> list[bytes]:
    blobs = []
    for kvs in batches:
        records = [Record(start + i, start + i, k, v) for i, (k, v) in enumerate(kvs)]
        blobs.append(encode_batch(records, partition_leader_epoch=LEADER_EPOCH))  # as the log stores it
        start += len(kvs)
    return blobs


@settings(max_examples=80, deadline=None)
@given(_kv_batches, st.integers(1, 4), _kv_batches)
def test_a_pass_in_steps_equals_one_pass_and_keeps_later_appends(
    batches: list[list[tuple[bytes | None, bytes | None]]],
    step: int,
    later: list[list[tuple[bytes | None, bytes | None]]],
) -> None:
    whole = memory_log(kv_blobs(batches))
    whole.compact(NOW, DAY)
    stepped = memory_log(kv_blobs(batches))
    pending = kv_blobs(later, stepped.log_end_offset)
    appended = b"".join(pending)
    for _ in stepped.compaction_steps(NOW, DAY, step):
        if pending:  # appends between steps
            stepped.append(RecordBatches.parse(pending.pop(0)))
    for blob in pending:
        stepped.append(RecordBatches.parse(blob))
    assert everything(stepped) == everything(whole) + appended
    # The indexes follow the swapped-in batches. Lookups answer records, as Kafka 3.9's
    # ListOffsets does: the first record at or after a timestamp, the first holding the maximum.
    headers = list(iter_headers(everything(stepped)))
    records = [r for batch in decode_batches(everything(stepped)) for r in batch.records]
    top = max((r.timestamp for r in records), default=None)
    assert stepped.max_timestamp() == (
        None if top is None else TimestampOffset(top, next(r.offset for r in records if r.timestamp == top))
    )
    for timestamp in range(stepped.log_end_offset + 2):
        first = next((r for r in records if r.timestamp >= timestamp), None)
        expected = None if first is None else TimestampOffset(first.timestamp, first.offset)
        assert stepped.offset_for_timestamp(timestamp) == expected
    for offset in range(stepped.log_end_offset):
        holding = next((h for h in headers if h.last_offset >= offset), None)
        assert stepped.read(offset, 1) == (
            b"" if holding is None else everything(stepped)[holding.position : holding.end]
        )


def test_delete_records_during_a_pass_voids_it() -> None:
    log = memory_log(kv_blobs([[(b"a", b"1")], [(b"a", b"2")], [(b"a", b"3")]]))
    steps = log.compaction_steps(NOW, DAY, 1)
    next(steps)
    log.delete_records(1)
    before = everything(log)
    for _ in steps:
        pass
    assert everything(log) == before
    assert log.compact(NOW, DAY) == 1
