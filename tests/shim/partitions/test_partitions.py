"""The partition service called directly, as the console calls it (no request, no handler):
validation's refusals, append, reads under both isolation levels, lookups and deletion."""

from __future__ import annotations

import pytest

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.protocol.records import RecordBatches
from kafka_shim.shim.partitions import append, delete, offsets, read, validation
from kafka_shim.shim.partitions.errors import PartitionRefused
from kafka_shim.storage.topics import Topic
from tests.batches import make_batch
from tests.helpers import Harness


def _topic(configs: dict[str, str] | None = None, name: str = "t") -> tuple[Harness, Topic]:
    h = Harness()
    return h, h.broker.topics.create(name, 1, configs or {})


@pytest.mark.parametrize(
    ("configs", "records", "code"),
    [
        ({}, b"\x00" * 10, ErrorCode.CORRUPT_MESSAGE),
        ({"max.message.bytes": "100"}, make_batch([b"x" * 200]), ErrorCode.MESSAGE_TOO_LARGE),
        ({"cleanup.policy": "compact"}, make_batch([b"v"]), ErrorCode.INVALID_RECORD),
    ],
    ids=["truncated", "too large", "keyless on compacted"],
)
def test_validation_refuses_as_log_validator(
    configs: dict[str, str], records: bytes, code: ErrorCode
) -> None:
    h, topic = _topic(configs)
    with pytest.raises(PartitionRefused) as refused:
        validation.validated(topic, 0, records, h.broker.config.kafka_value, legacy_allowed=False)
    assert refused.value.code == code


def test_writable_refuses_unknown_and_internal_partitions() -> None:
    h, _ = _topic()
    h.broker.topics.create("__consumer_offsets", 1, {})
    for name, index, code in [
        ("missing", 0, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION),
        ("t", 5, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION),
        ("__consumer_offsets", 0, ErrorCode.INVALID_TOPIC_EXCEPTION),
    ]:
        with pytest.raises(PartitionRefused) as refused:
            append.writable(h.broker.topics, name, index)
        assert refused.value.code == code, name


def _append(h: Harness, topic: Topic, *values: bytes) -> append.Appended:
    _, log = append.writable(h.broker.topics, topic.name, 0)
    batches = validation.validated(topic, 0, make_batch(list(values)), h.broker.config.kafka_value, False)
    return append.append(topic, log, batches, h.broker.config.kafka_value, lambda: 5_000)


def test_append_stamps_log_append_time_where_the_topic_asks() -> None:
    h, create_time = _topic()
    assert _append(h, create_time, b"a", b"b") == append.Appended(0, -1, 0)
    h2, log_append = _topic({"message.timestamp.type": "LogAppendTime"})
    assert _append(h2, log_append, b"a") == append.Appended(0, 5_000, 0)


def test_read_lookup_and_delete_on_one_partition() -> None:
    h, topic = _topic()
    _append(h, topic, b"a", b"b", b"c")
    log = topic.partition(0)
    assert log is not None
    code, records = read.read(log, 0, 1 << 20, min_one=True, committed=True, zero_copy=False, version=16)
    assert code == ErrorCode.NONE
    assert RecordBatches.parse(bytes(records)).first.last_offset == 2
    assert read.read(log, 99, 100, min_one=True, committed=False, zero_copy=False, version=16) == (
        ErrorCode.OFFSET_OUT_OF_RANGE,
        b"",
    )
    code, legacy = read.read(log, 0, 1 << 20, min_one=True, committed=False, zero_copy=False, version=1)
    assert read.down_converted(1, legacy, 0)[0] == ErrorCode.NONE
    assert offsets.lookup(log, offsets.LATEST, committed=False) == (-1, 3, log.leader_epoch)
    assert delete.delete_records(topic, 0, 2) == (ErrorCode.NONE, 2)
    assert offsets.lookup(log, offsets.EARLIEST, committed=False)[1] == 2
    assert delete.delete_records(topic, 7, 1) == (ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, -1)


def test_delete_refuses_a_compact_only_topic() -> None:
    _, topic = _topic({"cleanup.policy": "compact"})
    assert delete.delete_records(topic, 0, 0) == (ErrorCode.POLICY_VIOLATION, -1)
