"""Recorded requests stay bounded: by count, and by the bytes (record batches) they hold, the
oldest going first, so a produce-heavy test under the fixture keeps a bounded recording. The
trace file is the owner's alone when the recorder creates it."""

from __future__ import annotations

import json
import logging
import stat
from pathlib import Path

import pytest

from kafka_shim.protocol.schema import Parsed
from kafka_shim.shim.testbroker.recording import RecordedRequest, RequestRecorder, bytes_held


def produce(n: int, size: int) -> RecordedRequest:
    body = Parsed(topic_data=[{"name": "t", "partition_data": [{"index": 0, "records": bytes(size)}]}])
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


def test_the_trace_file_is_created_0600_and_an_open_existing_one_is_named(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    created = tmp_path / "new.jsonl"
    RequestRecorder(capacity=0, trace_file=created).close()
    assert stat.S_IMODE(created.stat().st_mode) == 0o600
    shared = tmp_path / "shared.jsonl"
    shared.write_text("")
    shared.chmod(0o644)
    with caplog.at_level(logging.WARNING, logger="kafka_shim.shim.testbroker.recording"):
        recorder = RequestRecorder(capacity=0, trace_file=shared)
        recorder.record(produce(1, 10))
        recorder.close()
    assert stat.S_IMODE(shared.stat().st_mode) == 0o644  # the operator's file, left as it is
    assert [r.getMessage() for r in caplog.records] == [
        f"trace file {shared} can be read by others (mode 0644): chmod 600 it"
    ]
    assert json.loads(shared.read_text())["api"] == "Produce"
