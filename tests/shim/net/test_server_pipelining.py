"""Pipelined requests over a real socket: the answers to a burst go out together, still in
request order; acks=0 gets none; an answer is never held behind a request that waits (a
long-poll Fetch); the requests before a frame that closes the connection are answered; and a
long burst does not hold the other connections up."""

from __future__ import annotations

import select
import struct
import threading
import time

from kafka_shim.protocol.record_codec import Record, encode_batch
from kafka_shim.pytest_plugin import KafkaShim
from tests.wire import WireClient

_LENGTH = struct.Struct(">i")
METADATA, PRODUCE, FETCH, API_VERSIONS = 3, 0, 1, 18


def framed(client: WireClient, api_key: int, version: int, body: dict) -> bytes:
    payload = client.frame(api_key, version, body)
    return _LENGTH.pack(len(payload)) + payload


def correlation(frame: bytes) -> int:
    return int(_LENGTH.unpack_from(frame)[0])


def produce(topic: str, acks: int) -> dict:
    batch = encode_batch([Record(0, int(time.time() * 1000), None, b"pipelined")])
    return {
        "transactional_id": None,
        "acks": acks,
        "timeout_ms": 5000,
        "topic_data": [{"name": topic, "partition_data": [{"index": 0, "records": batch}]}],
    }


def test_a_burst_is_answered_in_request_order_and_acks_0_gets_no_answer(kafka_shim: KafkaShim) -> None:
    topic = "pipelined"
    kafka_shim.create_topic(topic, 1)
    with WireClient(kafka_shim.bootstrap) as client:
        burst = [
            framed(client, API_VERSIONS, 3, {}),  # 1
            framed(client, PRODUCE, 7, produce(topic, -1)),  # 2
            framed(client, PRODUCE, 7, produce(topic, 0)),  # 3: acks=0, no answer
            framed(client, METADATA, 9, {"topics": None, "allow_auto_topic_creation": False}),  # 4
            framed(client, PRODUCE, 7, produce(topic, 1)),  # 5
            framed(client, PRODUCE, 7, produce(topic, 0)),  # 6: acks=0 last, no answer
        ]
        client.sock.sendall(b"".join(burst))
        answered = [correlation(client.receive_frame()) for _ in range(4)]
        assert answered == [1, 2, 4, 5]
        # The next request's answer is the next frame: nothing else was queued for 3 or 6.
        client.sock.sendall(framed(client, API_VERSIONS, 3, {}))
        assert correlation(client.receive_frame()) == 7
    # Every produce was appended, acks=0 ones included.
    log = kafka_shim.controlled().topics.partition(topic, 0)
    assert log is not None and kafka_shim.call(lambda: log.log_end_offset) == 4


def test_an_answer_is_not_held_behind_a_long_poll(kafka_shim: KafkaShim) -> None:
    topic = "pipelined-long-poll"
    kafka_shim.create_topic(topic, 1)
    fetch = {
        "replica_id": -1,
        "max_wait_ms": 60_000,  # longer than the client waits: a held Metadata answer would time out
        "min_bytes": 1,
        "max_bytes": 1 << 20,
        "isolation_level": 0,
        "session_id": 0,
        "session_epoch": -1,
        "topics": [
            {
                "topic": topic,
                "partitions": [
                    {
                        "partition": 0,
                        "current_leader_epoch": -1,
                        "fetch_offset": 0,
                        "log_start_offset": -1,
                        "partition_max_bytes": 1 << 20,
                    }
                ],
            }
        ],
        "forgotten_topics_data": [],
        "rack_id": "",
    }
    with WireClient(kafka_shim.bootstrap, timeout_s=10) as client:
        client.sock.sendall(
            framed(client, METADATA, 9, {"topics": None, "allow_auto_topic_creation": False})
            + framed(client, FETCH, 11, fetch)
        )
        assert correlation(client.receive_frame()) == 1


def test_requests_before_a_bad_frame_are_answered_before_the_close(kafka_shim: KafkaShim) -> None:
    with WireClient(kafka_shim.bootstrap) as client:
        bad = struct.pack(">hhih", 9999, 0, 9, -1)
        client.sock.sendall(
            framed(client, API_VERSIONS, 3, {})
            + framed(client, API_VERSIONS, 3, {})
            + _LENGTH.pack(len(bad))
            + bad
        )
        assert [correlation(client.receive_frame()) for _ in range(2)] == [1, 2]
        assert client.is_closed_by_peer()


def test_a_long_burst_does_not_hold_other_connections_up(kafka_shim: KafkaShim) -> None:
    """A client pipelining requests that need no answer (acks=0) is read without a yield per
    request, but not for long: another connection's request is answered while the burst is
    still being handled, before the answer to the burst's last request."""
    topic = "pipelined-burst"
    kafka_shim.create_topic(topic, 1)
    log = kafka_shim.controlled().topics.partition(topic, 0)
    assert log is not None
    with (
        WireClient(kafka_shim.bootstrap, timeout_s=60) as flooding,
        WireClient(kafka_shim.bootstrap, timeout_s=60) as other,
    ):
        unanswered = framed(flooding, PRODUCE, 7, produce(topic, 0))
        burst = unanswered * 20_000 + framed(flooding, PRODUCE, 7, produce(topic, 1))
        sender = threading.Thread(target=flooding.sock.sendall, args=(burst,))
        sender.start()
        try:
            deadline = time.monotonic() + 30
            while kafka_shim.call(lambda: log.log_end_offset) == 0:  # the burst is being handled
                assert time.monotonic() < deadline, "the broker appended nothing of the burst"
                time.sleep(0.001)
            other.sock.sendall(framed(other, API_VERSIONS, 3, {}))
            assert correlation(other.receive_frame()) == 1
            # poll, not select: in a long test run the socket's descriptor may be over 1024
            readable = select.poll()
            readable.register(flooding.sock, select.POLLIN)
            assert not readable.poll(0)  # the burst's last answer has not come yet
        finally:
            sender.join()
        assert correlation(flooding.receive_frame()) == 2
    assert kafka_shim.call(lambda: log.log_end_offset) == 20_001
