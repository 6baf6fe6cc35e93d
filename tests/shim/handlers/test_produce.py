"""Produce and InitProducerId handlers, with batches built by kafka-python
3.0.12's DefaultRecordBatchBuilder."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.protocol.records import MAGIC_POSITION
from kafka_shim.shim.handlers import init_producer_id, produce
from tests.batches import make_batch, read_records
from tests.helpers import Harness


def produce_request(
    records: bytes | None, topic: str = "t", partition: int = 0, acks: int = 1
) -> dict[str, Any]:
    return {
        "acks": acks,
        "timeout_ms": 1000,
        "topic_data": [{"name": topic, "partition_data": [{"index": partition, "records": records}]}],
    }


def produce_one(h: Harness, records: bytes | None, version: int = 9, **kwargs: Any) -> Any:
    # A client asks Metadata first, which creates the topic (Produce creates none, as in Kafka).
    h.broker.topics.auto_create(kwargs.get("topic", "t"))
    response = h.call(produce, version, produce_request(records, **kwargs))
    assert response is not None
    return response.responses[0].partition_responses[0]


@pytest.mark.parametrize("version", range(0, 12))
def test_every_version_appends_and_answers_offsets(version: int) -> None:
    h = Harness()
    first = produce_one(h, make_batch([b"a", b"b", b"c"]), version)
    second = produce_one(h, make_batch([b"d"]), version)
    assert (first.error_code, first.base_offset) == (ErrorCode.NONE, 0)
    assert (second.error_code, second.base_offset) == (ErrorCode.NONE, 3)
    assert second.log_start_offset == (0 if version >= 5 else -1)
    assert second.log_append_time_ms == -1
    assert h.broker.topics.partition("t", 0).log_end_offset == 4  # type: ignore[union-attr]


def test_v13_names_topics_by_id_and_answers_an_unknown_one_with_100() -> None:
    h = Harness()
    topic_id = h.broker.topics.create("t", 1).topic_id
    request = produce_request(make_batch([b"a"]))
    request["topic_data"] = [
        {"topic_id": topic_id, "partition_data": [{"index": 0, "records": make_batch([b"a"])}]},
        {"topic_id": uuid.uuid4(), "partition_data": [{"index": 0, "records": make_batch([b"b"])}]},
    ]
    known, unknown = h.call(produce, 13, request).responses
    assert (known.topic_id, known.partition_responses[0].error_code) == (topic_id, ErrorCode.NONE)
    assert unknown.partition_responses[0].error_code == ErrorCode.UNKNOWN_TOPIC_ID
    assert h.broker.topics.partition("t", 0).log_end_offset == 1  # type: ignore[union-attr]


def test_acks_zero_appends_without_a_response() -> None:
    h = Harness()
    h.broker.topics.create("t", 1)
    assert h.call(produce, 9, produce_request(make_batch([b"a"]), acks=0)) is None
    assert h.broker.topics.partition("t", 0).log_end_offset == 1  # type: ignore[union-attr]


def test_acks_all_is_satisfied_by_the_single_replica() -> None:
    assert produce_one(Harness(), make_batch([b"a"]), acks=-1).error_code == ErrorCode.NONE


def test_invalid_acks() -> None:
    h = Harness()
    response = h.call(produce, 9, produce_request(make_batch([b"a"]), acks=2))
    assert response.responses[0].partition_responses[0].error_code == ErrorCode.INVALID_REQUIRED_ACKS
    assert h.broker.topics.get("t") is None


def test_unknown_topic_without_auto_create() -> None:
    h = Harness(auto_create_topics=False)
    assert produce_one(h, make_batch([b"a"])).error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION


@pytest.mark.parametrize(
    ("topic", "partition"),
    [("t", 5), ("never-created", 0), ("no way", 0)],
    ids=["unknown partition", "unknown topic", "illegal name"],
)
def test_produce_creates_no_topic_and_answers_an_unknown_one_3(topic: str, partition: int) -> None:
    """Kafka 3.9's KafkaApis.handleProduceRequest: a partition missing from the metadata cache is
    UNKNOWN_TOPIC_OR_PARTITION with no message (a new PartitionResponse(error)), an illegal name
    too (it exists nowhere), with auto.create.topics.enable on; only Metadata creates topics.
    The corpus's internal.produce/consumer_offsets.v7.unknown_partition step is the same answer."""
    h = Harness(auto_create_topics=True)
    h.broker.topics.create("t", 1)
    response = h.call(produce, 9, produce_request(make_batch([b"a"]), topic=topic, partition=partition))
    answer = response.responses[0].partition_responses[0]
    assert (answer.error_code, answer.error_message, answer.base_offset) == (
        ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
        None,
        -1,
    )
    assert [t.name for t in h.broker.topics] == ["t"]


def test_corrupt_batch() -> None:
    data = bytearray(make_batch([b"hello"]))
    data[-1] ^= 1
    assert produce_one(Harness(), bytes(data)).error_code == ErrorCode.CORRUPT_MESSAGE
    assert produce_one(Harness(), None).error_code == ErrorCode.CORRUPT_MESSAGE


def test_old_magic_is_refused_from_v3_as_kafka_refuses_it() -> None:
    data = bytearray(make_batch([b"hello"]))
    data[MAGIC_POSITION] = 1
    refused = produce_one(Harness(), bytes(data))
    # ProduceRequest.validateRecords' refusal: KafkaApis sends its code without a message.
    assert (refused.error_code, refused.error_message) == (ErrorCode.INVALID_RECORD, None)


def test_message_too_large_for_broker_and_topic_limits() -> None:
    batch = make_batch([b"x" * 500])
    h = Harness(message_max_bytes=len(batch) - 1)
    response = produce_one(h, batch)
    assert response.error_code == ErrorCode.MESSAGE_TOO_LARGE and response.error_message
    h = Harness()
    h.broker.topics.create("t", configs={"max.message.bytes": "100"})
    assert produce_one(h, batch).error_code == ErrorCode.MESSAGE_TOO_LARGE


def test_log_append_time_topic() -> None:
    h = Harness()
    h.broker.topics.create("t", configs={"message.timestamp.type": "LogAppendTime"})
    response = produce_one(h, make_batch([b"a", b"b"]))
    assert response.log_append_time_ms == h.clock.now
    stored = h.broker.topics.partition("t", 0).read(0, 1 << 20)  # type: ignore[union-attr]
    assert {t for _, t, _ in read_records(stored)} == {h.clock.now}


def test_idempotent_producer_flow() -> None:
    h = Harness()
    init = h.call(init_producer_id, 4, {"transactional_id": None, "transaction_timeout_ms": 60000})
    assert init is not None and init.error_code == ErrorCode.NONE and init.producer_epoch == 0
    pid = init.producer_id

    def batch(sequence: int) -> bytes:
        return make_batch([b"a", b"b"], producer_id=pid, producer_epoch=0, base_sequence=sequence)

    assert produce_one(h, batch(0)).base_offset == 0
    assert produce_one(h, batch(2)).base_offset == 2
    retried = produce_one(h, batch(2))
    assert (retried.error_code, retried.base_offset) == (ErrorCode.NONE, 2)
    assert produce_one(h, batch(9)).error_code == ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER
    assert h.broker.topics.partition("t", 0).log_end_offset == 4  # type: ignore[union-attr]


@pytest.mark.parametrize("version", range(0, 6))
def test_init_producer_id_allocates_fresh_ids(version: int) -> None:
    h = Harness()
    request = {
        "transactional_id": None,
        "transaction_timeout_ms": 1000,
        "producer_id": 5,
        "producer_epoch": 3,
    }
    first, second = (h.call(init_producer_id, version, request) for _ in range(2))
    assert first is not None and second is not None
    assert second.producer_id == first.producer_id + 1
    assert (first.producer_epoch, second.producer_epoch) == (0, 0)


def test_an_empty_transactional_id_is_refused() -> None:
    response = Harness().call(init_producer_id, 4, {"transactional_id": "", "transaction_timeout_ms": 1})
    assert response is not None
    assert (response.error_code, response.producer_id, response.producer_epoch) == (
        ErrorCode.INVALID_REQUEST,
        -1,
        -1,
    )


# A compacted topic refuses records without a key, as Kafka's LogValidator does: INVALID_RECORD
# with one record error per keyless record (its index in the batch), and nothing written.
KEYLESS_CASES = [
    ([b"k0", None, b"k2"], [1]),
    ([None, None, None, None], [0, 1, 2, 3]),
]


@pytest.mark.parametrize("compression", ["none", "gzip"])
@pytest.mark.parametrize(("keys", "keyless"), KEYLESS_CASES)
@pytest.mark.parametrize("policy", ["compact", "compact,delete"])
def test_compacted_topic_refuses_keyless_records_and_writes_nothing(
    compression: str, keys: list[bytes | None], keyless: list[int], policy: str
) -> None:
    h = Harness()
    h.broker.topics.create("t", 1, {"cleanup.policy": policy})
    values = [b"v%d" % i for i in range(len(keys))]
    answer = produce_one(h, make_batch(values, keys=keys, compression=compression), version=11)
    reason = "Compacted topic cannot accept message without key in topic partition t-0"
    assert (answer.error_code, answer.base_offset) == (ErrorCode.INVALID_RECORD, -1)
    assert [(e.batch_index, e.batch_index_error_message) for e in answer.record_errors] == [
        (i, reason) for i in keyless
    ]
    shown = ", ".join(f"RecordError(batchIndex={i}, message='{reason}')" for i in keyless[:3])
    assert answer.error_message == (
        f"One or more records have been rejected due to {len(keyless)} record errors in total, "
        f"and only showing the first three errors at most: [{shown}]"
    )
    assert h.broker.topics.partition("t", 0).log_end_offset == 0  # type: ignore[union-attr]


@pytest.mark.parametrize("version", [3, 7])
def test_versions_before_record_errors_still_refuse_keyless_records(version: int) -> None:
    h = Harness()
    h.broker.topics.create("t", 1, {"cleanup.policy": "compact"})
    answer = produce_one(h, make_batch([b"v"]), version=version)
    assert answer.error_code == ErrorCode.INVALID_RECORD


def test_compacted_topic_accepts_keyed_records_and_delete_topics_accept_keyless() -> None:
    h = Harness()
    h.broker.topics.create("t", 1, {"cleanup.policy": "compact"})
    h.broker.topics.create("plain", 1)
    assert produce_one(h, make_batch([b"v"], key=b"k")).error_code == ErrorCode.NONE
    assert produce_one(h, make_batch([b"v"]), topic="plain").error_code == ErrorCode.NONE
