"""Fetch's zero-copy path over a real socket: records left in their segment files
(protocol.file_records) reach the client byte for byte what the log holds, across segments and
when the budget cuts inside one; responses to pipelined requests keep their order; and the
codec builds the same bytes around FileRecords as around the bytes they stand for."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from kafka_shim.protocol.file_records import FileRecords, Spliced
from kafka_shim.protocol.messages.fetch import API as FETCH
from kafka_shim.shim.config.broker_config import BrokerConfig
from kafka_shim.shim.server import BrokerThread
from kafka_shim.storage.disk_log import SENDFILE_MIN_BYTES
from tests.batches import batch
from tests.wire import WireClient

VERSION = 12
# 40 batches of 10 records of 1000 B: ~400 kB over several 100 kB segments.
BATCHES, RECORDS, VALUE = 40, 10, b"v" * 1000


@pytest.fixture
def broker(tmp_path: Path) -> Iterator[BrokerThread]:
    thread = BrokerThread(BrokerConfig(host="127.0.0.1", port=0, data_dir=tmp_path / "data"))
    topic = thread.broker.topics.create("t", 1, {"segment.bytes": str(100_000)})
    log = topic.partitions[0]
    for _ in range(BATCHES):
        log.append(batch(*[VALUE] * RECORDS))
    thread.start()
    yield thread
    thread.stop()


def fetch_body(topic_id: object, offset: int, max_bytes: int) -> dict[str, object]:
    return {
        "replica_id": -1,
        "max_wait_ms": 0,
        "min_bytes": 0,
        "max_bytes": max_bytes,
        "isolation_level": 0,
        "session_id": 0,
        "session_epoch": -1,
        "topics": [
            {
                "topic": "t",
                "topic_id": topic_id,
                "partitions": [{"partition": 0, "fetch_offset": offset, "partition_max_bytes": max_bytes}],
            }
        ],
        "forgotten_topics_data": [],
        "rack_id": "",
    }


# The whole log; the budget cut inside a segment; from inside a batch; a second segment on.
CUTS = [(0, 1 << 24), (0, 150_000), (35, 1 << 20), (123, 60_000)]


@pytest.mark.parametrize(("offset", "max_bytes"), CUTS)
def test_a_fetch_served_from_files_is_what_the_log_holds(
    broker: BrokerThread, offset: int, max_bytes: int
) -> None:
    log = broker.broker.topics.partition("t", 0)
    assert log is not None
    expected = log.read(offset, max_bytes)
    assert len(expected) >= SENDFILE_MIN_BYTES  # the zero-copy path, not the copying one
    topic_id = broker.broker.topics.get("t").topic_id  # type: ignore[union-attr]
    with WireClient(broker.bootstrap) as client:
        response = client.request(FETCH.key, VERSION, fetch_body(topic_id, offset, max_bytes))
    partition = response.responses[0].partitions[0]
    assert (partition.error_code, partition.high_watermark) == (0, BATCHES * RECORDS)
    assert partition.records == expected


def test_pipelined_fetches_are_answered_in_order(broker: BrokerThread) -> None:
    topic_id = broker.broker.topics.get("t").topic_id  # type: ignore[union-attr]
    with WireClient(broker.bootstrap) as client:
        bodies = [fetch_body(topic_id, offset, 1 << 20) for offset in (0, 200, 0)]
        frames = [client.frame(FETCH.key, VERSION, body) for body in bodies]
        client.sock.sendall(b"".join(len(f).to_bytes(4, "big") + f for f in frames))
        correlations = [int.from_bytes(client.receive_frame()[:4], "big") for _ in frames]
    assert correlations == [1, 2, 3]


def test_the_codec_builds_the_same_bytes_around_file_records(tmp_path: Path) -> None:
    path = tmp_path / "records"
    stored = os.urandom(5000)
    path.write_bytes(stored)
    fd = os.open(path, os.O_RDONLY)
    partition: dict[str, object] = {"partition_index": 0, "records": stored[100:4100]}
    answer: dict[str, object] = {"throttle_time_ms": 0, "error_code": 0, "session_id": 0}
    answer["responses"] = [{"topic": "t", "partitions": [partition]}]
    codec = FETCH.response.codec(VERSION)
    plain = codec.build(answer)
    partition["records"] = FileRecords([(fd, 100, 3000), (os.dup(fd), 3100, 1000)])
    spliced = codec.build(answer)
    assert isinstance(spliced, Spliced) and isinstance(plain, bytes)
    assert (len(spliced), bytes(spliced)) == (len(plain), plain)
