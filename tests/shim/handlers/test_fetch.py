"""Fetch and ListOffsets handlers over logs filled through the Produce handler,
with batches from kafka-python 3.0.12's DefaultRecordBatchBuilder."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.shim.handlers import fetch, list_offsets
from tests.batches import make_batch, read_records
from tests.helpers import Harness
from tests.shim.handlers.test_produce import produce_one


def fetch_request(
    h: Harness, version: int, offset: int = 0, *, partitions: int = 1, **overrides: Any
) -> dict[str, Any]:
    topic = h.broker.topics.get("t")
    request: dict[str, Any] = {
        "max_wait_ms": 0,
        "min_bytes": 1,
        "max_bytes": 1 << 20,
        "session_epoch": -1,
        "topics": [
            {
                "topic": "t",
                "topic_id": topic.topic_id if topic is not None else None,
                "partitions": [
                    {"partition": p, "fetch_offset": offset, "partition_max_bytes": 1 << 20}
                    for p in range(partitions)
                ],
            }
        ],
    }
    return request | overrides


def fetched(h: Harness, version: int = 12, offset: int = 0, **overrides: Any) -> Any:
    response = h.call(fetch, version, fetch_request(h, version, offset, **overrides))
    assert response is not None
    return response


def filled(*batches: bytes, partitions: int = 1) -> Harness:
    h = Harness()
    h.broker.topics.create("t", partitions)
    for batch in batches:
        produce_one(h, batch)
    return h


@pytest.mark.parametrize("version", range(4, 17))
def test_every_version_serves_what_was_produced(version: int) -> None:
    h = filled(make_batch([b"a", b"b"]), make_batch([b"c"]))
    response = fetched(h, version)
    assert response.error_code == ErrorCode.NONE and response.session_id == 0
    topic = response.responses[0]
    if version >= 13:
        assert topic.topic_id == h.broker.topics.get("t").topic_id  # type: ignore[union-attr]
    part = topic.partitions[0]
    assert (part.error_code, part.high_watermark, part.last_stable_offset) == (ErrorCode.NONE, 3, 3)
    assert part.log_start_offset == (0 if version >= 5 else -1)
    assert [(o, v) for o, _, v in read_records(part.records)] == [(0, b"a"), (1, b"b"), (2, b"c")]


def test_fetch_at_the_end_returns_present_but_empty_records() -> None:
    h = filled(make_batch([b"a"]))
    response = fetched(h, offset=1)
    assert response.responses[0].partitions[0].records == b""  # not None on the wire


def test_long_poll_returns_when_data_arrives() -> None:
    h = filled(make_batch([b"a"]))
    ctx = h.context(12)
    ctx.during_wait.append(lambda: produce_one(h, make_batch([b"late"])))
    response = h.call(fetch, 12, fetch_request(h, 12, 1, max_wait_ms=5000), ctx)
    assert response is not None
    assert [v for _, _, v in read_records(response.responses[0].partitions[0].records)] == [b"late"]
    assert ctx.waits == [5000]


def test_long_poll_times_out_empty_after_max_wait() -> None:
    h = filled(make_batch([b"a"]))
    ctx = h.context(12)
    start = h.clock.now
    response = h.call(fetch, 12, fetch_request(h, 12, 1, max_wait_ms=500), ctx)
    assert response is not None and response.responses[0].partitions[0].records == b""
    assert h.clock.now - start == 500


def test_min_bytes_keeps_waiting_until_enough_data() -> None:
    h = filled()
    ctx = h.context(12)
    ctx.during_wait += [lambda: produce_one(h, make_batch([b"x"])) for _ in range(2)]
    size = len(make_batch([b"x"]))
    response = h.call(fetch, 12, fetch_request(h, 12, min_bytes=2 * size, max_wait_ms=10_000), ctx)
    assert response is not None and len(response.responses[0].partitions[0].records) == 2 * size
    assert len(ctx.waits) == 2


def test_offset_out_of_range_answers_at_once() -> None:
    h = filled(make_batch([b"a"]))
    ctx = h.context(12)
    response = h.call(fetch, 12, fetch_request(h, 12, 7, max_wait_ms=5000), ctx)
    assert response is not None
    part = response.responses[0].partitions[0]
    # ReplicaManager.createLogReadResult: a refused read answers -1 for its offsets (the corpus'
    # delete_records.* step 11 records it below the log start).
    assert (part.error_code, part.records, part.high_watermark) == (ErrorCode.OFFSET_OUT_OF_RANGE, b"", -1)
    assert ctx.waits == []


def test_unknown_topic_and_unknown_topic_id() -> None:
    h = Harness()
    assert fetched(h, 12).responses[0].partitions[0].error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    h.broker.topics.create("t")
    request = fetch_request(h, 13)
    request["topics"][0]["topic_id"] = uuid.uuid4()
    response = h.call(fetch, 13, request)
    assert response is not None
    assert response.responses[0].partitions[0].error_code == ErrorCode.UNKNOWN_TOPIC_ID


def test_partition_and_response_limits_keep_whole_batches() -> None:
    batch = make_batch([b"x" * 200])
    h = filled(batch, batch)
    one = fetched(h)
    assert len(one.responses[0].partitions[0].records) == 2 * len(batch)
    request = fetch_request(h, 12)
    request["topics"][0]["partitions"][0]["partition_max_bytes"] = 1  # soft: one whole batch
    response = h.call(fetch, 12, request)
    assert response is not None and len(response.responses[0].partitions[0].records) == len(batch)


def test_response_max_bytes_spans_partitions() -> None:
    batch = make_batch([b"x" * 200])
    h = Harness()
    h.broker.topics.create("t", 2)
    for partition in (0, 1):
        produce_one(h, batch, partition=partition)
    response = fetched(h, partitions=2, max_bytes=len(batch) + 10)
    sizes = [len(p.records) for p in response.responses[0].partitions]
    assert sizes == [len(batch), 0]  # the second partition's batch would pass max_bytes


@pytest.mark.parametrize(("isolation", "aborted"), [(0, None), (1, [])])
def test_aborted_transactions_by_isolation_level(isolation: int, aborted: list[Any] | None) -> None:
    h = filled(make_batch([b"a"]))
    part = fetched(h, isolation_level=isolation).responses[0].partitions[0]
    assert part.aborted_transactions == aborted


# --- ListOffsets ---------------------------------------------------------------


def list_offset(h: Harness, timestamp: int, version: int = 7, partition: int = 0) -> Any:
    request = {
        "replica_id": -1,
        "topics": [{"name": "t", "partitions": [{"partition_index": partition, "timestamp": timestamp}]}],
    }
    response = h.call(list_offsets, version, request)
    assert response is not None
    return response.topics[0].partitions[0]


@pytest.mark.parametrize("version", range(1, 9))
def test_earliest_and_latest_in_every_version(version: int) -> None:
    h = filled(make_batch([b"a", b"b", b"c"]), make_batch([b"d", b"e"]))
    assert list_offset(h, -2, version).offset == 0
    # The last offset of the last batch + 1, not the last batch's base offset + 1.
    assert list_offset(h, -1, version).offset == 5


def test_max_timestamp_and_timestamp_lookup() -> None:
    h = filled(
        make_batch([b"a", b"b"], timestamps=[100, 200]),
        make_batch([b"c", b"d"], timestamps=[900, 300]),
    )
    top = list_offset(h, -3)  # the first offset holding the max, as Kafka (not the batch's last)
    assert (top.timestamp, top.offset) == (900, 2)
    found = list_offset(h, 150)  # the first record at or after it, with its own timestamp
    assert (found.error_code, found.timestamp, found.offset) == (ErrorCode.NONE, 200, 1)
    assert list_offset(h, 500).offset == 2
    missing = list_offset(h, 10_000)
    assert (missing.timestamp, missing.offset) == (-1, -1)
    assert list_offset(h, -4, version=8).offset == 0  # earliest-local: no tiered storage


@pytest.mark.parametrize(
    ("version", "timestamp", "code"),
    [  # KafkaApis' timestampMinSupportedVersion: -3 from v7, -4 from v8, -5 from v9, others never
        (6, -3, ErrorCode.UNSUPPORTED_VERSION),
        (7, -3, ErrorCode.NONE),
        (7, -4, ErrorCode.UNSUPPORTED_VERSION),
        (8, -4, ErrorCode.NONE),
        (8, -5, ErrorCode.UNSUPPORTED_VERSION),
        (9, -5, ErrorCode.NONE),
        (9, -7, ErrorCode.UNSUPPORTED_VERSION),
    ],
)
def test_special_timestamps_by_version(version: int, timestamp: int, code: ErrorCode) -> None:
    assert list_offset(filled(make_batch([b"a"])), timestamp, version).error_code == code


@pytest.mark.parametrize(
    ("epoch", "code"),
    [(-1, ErrorCode.NONE), (0, ErrorCode.NONE), (7, ErrorCode.UNKNOWN_LEADER_EPOCH)],
)
def test_the_current_leader_epoch_is_checked(epoch: int, code: ErrorCode) -> None:
    """Partition.localLogWithEpochOrThrow: a leader epoch the broker has not reached is 75."""
    h = filled(make_batch([b"a"]))
    request = {
        "replica_id": -1,
        "topics": [
            {
                "name": "t",
                "partitions": [{"partition_index": 0, "timestamp": -1, "current_leader_epoch": epoch}],
            }
        ],
    }
    assert h.call(list_offsets, 4, request).topics[0].partitions[0].error_code == code


def test_a_partition_asked_twice_is_refused_both_times() -> None:
    h = filled(make_batch([b"a"]))
    twice = [{"partition_index": 0, "timestamp": -1}, {"partition_index": 0, "timestamp": -2}]
    response = h.call(list_offsets, 5, {"replica_id": -1, "topics": [{"name": "t", "partitions": twice}]})
    assert [(p.error_code, p.offset) for p in response.topics[0].partitions] == [
        (ErrorCode.INVALID_REQUEST, -1)
    ] * 2


def test_list_offsets_errors() -> None:
    h = filled()
    assert list_offset(h, -1, partition=3).error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    assert list_offset(h, -9).error_code == ErrorCode.UNSUPPORTED_VERSION  # KafkaApis, any version
    empty = list_offset(h, -3)
    assert (empty.error_code, empty.timestamp, empty.offset) == (ErrorCode.NONE, -1, -1)
