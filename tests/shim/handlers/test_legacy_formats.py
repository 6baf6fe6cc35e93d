"""The magic 0/1 era through the handlers: Produce v0-2 up-converts message sets built by
kafka-python 3.0.12, Fetch v0-3 down-converts, ListOffsets v0, CreateTopics v0-1,
DeleteTopics v0; and FindCoordinator's error_message per version."""

from __future__ import annotations

from typing import Any

import pytest
from kafka.record.legacy_records import LegacyRecordBatchBuilder

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.protocol.record_codec import GZIP, NONE, ZSTD, Record, build_batch, decode_batches
from kafka_shim.protocol.records import RecordBatches
from kafka_shim.protocol.settings.security import STANDARD_AUTHORIZER
from kafka_shim.shim.handlers import (
    create_topics,
    delete_topics,
    fetch,
    find_coordinator,
    list_offsets,
    produce,
)
from kafka_shim.storage.log import SegmentSpan
from tests.batches import make_batch, read_records
from tests.helpers import Harness


def message_set(magic: int, values: list[bytes | None], codec: int = NONE, key: bytes | None = None) -> bytes:
    builder = LegacyRecordBatchBuilder(magic=magic, compression_type=codec, batch_size=1 << 20)
    for offset, value in enumerate(values):
        builder.append(offset, timestamp=1_000 + offset, key=key, value=value)
    return bytes(builder.build())


def produced(h: Harness, version: int, records: bytes, topic: str = "t") -> Any:
    h.broker.topics.auto_create(topic)  # as the client's Metadata request would (Produce creates none)
    request = {
        "acks": 1,
        "timeout_ms": 1000,
        "topic_data": [{"name": topic, "partition_data": [{"index": 0, "records": records}]}],
    }
    response = h.call(produce, version, request)
    return response.responses[0].partition_responses[0]


def fetched(h: Harness, version: int, offset: int = 0, topic: str = "t", limit: int = 1 << 20) -> Any:
    request = {
        "max_wait_ms": 0,
        "min_bytes": 1,
        "max_bytes": 1 << 20,
        "topics": [
            {
                "topic": topic,
                "partitions": [{"partition": 0, "fetch_offset": offset, "partition_max_bytes": limit}],
            }
        ],
    }
    return h.call(fetch, version, request).responses[0].partitions[0]


def stored(h: Harness, topic: str = "t") -> RecordBatches:
    log = h.broker.topics.partition(topic, 0)
    assert log is not None
    return RecordBatches.parse(log.read(0, 1 << 20))


@pytest.mark.parametrize("version", [0, 1, 2])
@pytest.mark.parametrize(("magic", "codec"), [(0, NONE), (0, GZIP), (1, NONE), (1, GZIP)])
def test_produce_v0_2_appends_message_sets_as_one_v2_batch_each(version: int, magic: int, codec: int) -> None:
    h = Harness()
    first = produced(h, version, message_set(magic, [b"a", b"b"], codec))
    second = produced(h, version, message_set(magic, [b"c", None], codec))
    assert (first.error_code, first.base_offset, second.error_code, second.base_offset) == (0, 0, 0, 2)
    batches = stored(h)
    assert [(b.magic, b.base_offset, b.records_count, b.compression) for b in batches.headers] == [
        (2, 0, 2, codec),
        (2, 2, 2, codec),
    ]
    time = -1 if magic == 0 else 1_000
    records = [(r.offset, r.timestamp, r.value) for d in decode_batches(batches.data) for r in d.records]
    assert records == [(0, time, b"a"), (1, time + magic, b"b"), (2, time, b"c"), (3, time + magic, None)]


def test_produce_v3_and_later_refuse_message_sets_as_kafka_does() -> None:
    refused = produced(Harness(), 3, message_set(1, [b"a"]))
    assert refused.error_code == ErrorCode.INVALID_RECORD


def test_produce_v2_of_a_v2_batch_is_stored_as_sent() -> None:
    h = Harness()
    batch = make_batch([b"x"])
    assert produced(h, 2, batch).error_code == ErrorCode.NONE
    assert stored(h).data[12:] == batch[12:]  # only the base offset and leader epoch are the broker's


def test_topic_configs_apply_to_converted_sets_log_append_time_compression_and_compaction() -> None:
    h = Harness()
    h.broker.topics.create(
        "stamped", 1, {"message.timestamp.type": "LogAppendTime", "compression.type": "gzip"}
    )
    answer = produced(h, 2, message_set(1, [b"a"]), topic="stamped")
    assert answer.log_append_time_ms == h.clock.now
    (header,) = stored(h, "stamped").headers
    assert header.is_log_append_time and header.max_timestamp == h.clock.now and header.compression == GZIP
    h.broker.topics.create("compacted", 1, {"cleanup.policy": "compact"})
    refused = produced(h, 2, message_set(1, [b"a", b"b"]), topic="compacted")
    assert refused.error_code == ErrorCode.INVALID_RECORD
    assert [e.batch_index for e in refused.record_errors] == []  # v2 answers carry no record errors
    assert produced(h, 2, message_set(1, [b"a"], key=b"k"), topic="compacted").error_code == ErrorCode.NONE


def test_message_too_large_is_measured_on_the_message_as_sent() -> None:
    data = message_set(1, [b"x" * 300])
    h = Harness(message_max_bytes=len(data) - 1)
    assert produced(h, 2, data).error_code == ErrorCode.MESSAGE_TOO_LARGE


@pytest.mark.parametrize(("version", "timestamp"), [(0, None), (1, None), (2, 1_000), (3, 1_000)])
def test_fetch_v0_3_serves_magic_0_or_1(version: int, timestamp: int | None) -> None:
    h = Harness()
    produced(h, 9, make_batch([b"a", b"b"], base_timestamp=1_000, compression="gzip"))
    produced(h, 9, make_batch([b"c"], base_timestamp=1_000))
    answer = fetched(h, version)
    assert answer.error_code == ErrorCode.NONE and answer.high_watermark == 3
    assert answer.records[16] == (0 if version <= 1 else 1)  # the magic byte
    late = timestamp if timestamp is None else timestamp + 1
    assert read_records(answer.records) == [(0, timestamp, b"a"), (1, late, b"b"), (2, timestamp, b"c")]
    assert read_records(fetched(h, version, offset=3).records) == []


def test_fetch_v0_2_do_not_serve_a_first_batch_beyond_the_partition_limit_v3_does() -> None:
    h = Harness()
    produced(h, 9, make_batch([b"x" * 500]))
    assert [len(fetched(h, version, limit=100).records) > 0 for version in range(4)] == [
        False,
        False,
        False,
        True,
    ]


def test_fetch_v2_skips_control_batches_and_serves_aborted_records_read_uncommitted() -> None:
    h = Harness()
    h.broker.topics.create("t", 1)
    log = h.broker.topics.partition("t", 0)
    assert log is not None
    txn = make_batch([b"aborted"], producer_id=9, producer_epoch=0, base_sequence=0, transactional=True)
    log.append(RecordBatches.parse(txn))
    log.write_txn_marker(9, 0, False, 0, h.clock.now)
    produced(h, 9, make_batch([b"after"]))
    assert read_records(fetched(h, 2).records) == [(0, 1_000, b"aborted"), (2, 1_000, b"after")]


def test_fetch_answers_kafka_s_errors_for_what_old_versions_cannot_read() -> None:
    h = Harness()
    h.broker.topics.create("z", 1, {"compression.type": "zstd"})
    zstd = build_batch([Record(0, 1, None, b"z")], attributes=ZSTD).data  # kafka-python has no zstd here
    produced(h, 9, zstd, topic="z")
    for version in (3, 9):  # a zstd topic before v10
        answer = fetched(h, version, topic="z")
        assert (answer.error_code, answer.high_watermark) == (ErrorCode.UNSUPPORTED_COMPRESSION_TYPE, -1)
    assert fetched(h, 10, topic="z").error_code == ErrorCode.NONE
    produced(h, 9, zstd)  # a zstd batch in a topic that stores batches as sent
    assert fetched(h, 2).error_code == ErrorCode.UNSUPPORTED_COMPRESSION_TYPE
    h.broker.topics.create("off", 1, {"message.downconversion.enable": "false"})
    assert fetched(h, 3, topic="off").error_code == ErrorCode.UNSUPPORTED_VERSION
    assert fetched(h, 4, topic="off").error_code == ErrorCode.NONE


def list_offsets_v0(h: Harness, timestamp: int, max_num: int = 1, replica_id: int = -1) -> Any:
    request = {
        "replica_id": replica_id,
        "topics": [
            {
                "name": "t",
                "partitions": [{"partition_index": 0, "timestamp": timestamp, "max_num_offsets": max_num}],
            }
        ],
    }
    return h.call(list_offsets, 0, request).topics[0].partitions[0]


def test_list_offsets_v0_latest_and_earliest_as_old_style_offsets() -> None:
    h = Harness()
    produced(h, 2, message_set(1, [b"a", b"b", b"c"]))
    assert list_offsets_v0(h, -1).old_style_offsets == [3]
    assert list_offsets_v0(h, -1, max_num=5).old_style_offsets == [3, 0]  # log end, then segment bases
    assert list_offsets_v0(h, -2, max_num=5).old_style_offsets == [0]
    assert list_offsets_v0(h, -3).error_code == ErrorCode.UNSUPPORTED_VERSION


def test_legacy_offsets_pick_segments_by_their_last_write_as_kafka() -> None:
    spans = [SegmentSpan(0, False, 100), SegmentSpan(10, False, 200), SegmentSpan(20, False, 300)]
    pick = list_offsets.legacy_offsets
    assert pick(spans, 25, -1, 10, now_ms=400) == [25, 20, 10, 0]
    assert pick(spans, 25, 250, 10, now_ms=400) == [10, 0]  # segments last written at or before 250
    assert pick(spans, 25, 50, 10, now_ms=400) == []
    assert pick(spans, 25, -2, 10, now_ms=400) == [0]
    empty_active = [*spans[:2], SegmentSpan(20, True, 300)]
    assert pick(empty_active, 20, -1, 10, now_ms=400) == [20, 10, 0]


def test_list_offsets_v9_has_no_tiered_offset() -> None:
    h = Harness()
    produced(h, 9, make_batch([b"a"]))
    request = {
        "replica_id": -1,
        "topics": [{"name": "t", "partitions": [{"partition_index": 0, "timestamp": -5}]}],
    }
    answer = h.call(list_offsets, 9, request).topics[0].partitions[0]
    assert (answer.error_code, answer.timestamp, answer.offset, answer.leader_epoch) == (0, -1, -1, -1)


@pytest.mark.parametrize("version", [0, 1])
def test_create_topics_v0_1_and_delete_topics_v0(version: int) -> None:
    h = Harness()
    request = {
        "topics": [
            {"name": "old", "num_partitions": 2, "replication_factor": 1, "assignments": [], "configs": []},
            {"name": "bad", "num_partitions": 1, "replication_factor": 3, "assignments": [], "configs": []},
        ],
        "timeout_ms": 1000,
    }
    created, refused = h.call(create_topics, version, request).topics
    assert (created.name, created.error_code) == ("old", ErrorCode.NONE)
    assert refused.error_code == ErrorCode.INVALID_REPLICATION_FACTOR
    if version == 1:  # v0 has no error_message
        assert refused.error_message
    topic = h.broker.topics.get("old")
    assert topic is not None and len(topic.partitions) == 2
    (deleted,) = h.call(delete_topics, 0, {"topic_names": ["old"], "timeout_ms": 1000}).responses
    assert (deleted.name, deleted.error_code) == ("old", ErrorCode.NONE) and h.broker.topics.get(
        "old"
    ) is None


@pytest.mark.parametrize(("version", "message"), [(0, None), (1, "NONE"), (2, "NONE"), (3, "NONE")])
def test_find_coordinator_error_message_on_success_as_kafka_sends_it(
    version: int, message: str | None
) -> None:
    answer = Harness().call(find_coordinator, version, {"key": "g", "key_type": 0})
    assert (answer.error_code, answer.error_message) == (ErrorCode.NONE, message)


def test_find_coordinator_v4_plus_never_carries_an_error_message() -> None:
    """v4+ coordinators keep the schema's default message, "" (Kafka 3.9 sets none; the corpus,
    tests/fidelity, recorded "" on success)."""
    h = Harness(authorizer_class_name=STANDARD_AUTHORIZER)
    for version in (4, 5, 6):
        request = {"key_type": 0, "coordinator_keys": ["g"]}
        (denied,) = h.call(find_coordinator, version, request).coordinators
        assert (denied.error_code, denied.error_message) == (ErrorCode.GROUP_AUTHORIZATION_FAILED, "")
    old = h.call(find_coordinator, 3, {"key": "g", "key_type": 0})
    assert (old.error_code, old.error_message) == (
        ErrorCode.GROUP_AUTHORIZATION_FAILED,
        "Group authorization failed.",
    )
