"""Recorded requests stay bounded: by count, and by the bytes (record batches) they hold, the
oldest going first, so a produce-heavy test under the fixture keeps a bounded recording."""

from __future__ import annotations

from kafka_shim.shim.recording import RecordedRequest, RequestRecorder, bytes_held


def produce(n: int, size: int) -> RecordedRequest:
    body = {"topic_data": [{"name": "t", "partition_data": [{"index": 0, "records": bytes(size)}]}]}
    return RecordedRequest(
        n, 0, 9, n, "app", "User:ANONYMOUS", "127.0.0.1:1", 0, body, {"responses": []}, None
    )


def test_bytes_held_counts_every_bytes_field() -> None:
    assert bytes_held({"a": [b"xy", {"b": bytearray(3)}], "c": "text", "d": 7}) == 5


def test_the_oldest_go_first_past_the_count_or_the_bytes() -> None:
    recorder = RequestRecorder(capacity=3, max_bytes=1000)
    for n in range(5):
        recorder.record(produce(n, 100))
    assert [e.at_ms for e in recorder] == [2, 3, 4]  # by count
    recorder.record(produce(5, 900))
    assert [e.at_ms for e in recorder] == [4, 5]  # by bytes: 100 + 100 + 900 > 1000, 100 + 900 is not
    recorder.record(produce(6, 5000))
    assert [e.at_ms for e in recorder] == [6]  # one entry is kept however large
    recorder.clear()
    recorder.record(produce(7, 10))
    assert [e.at_ms for e in recorder] == [7]
