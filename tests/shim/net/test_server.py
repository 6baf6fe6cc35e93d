"""The server over real sockets: framing, bounds, unknown APIs and versions."""

from __future__ import annotations

import logging
import struct

import pytest

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.pytest_plugin import KafkaShim
from tests.wire import WireClient

API_VERSIONS = 18


@pytest.mark.parametrize("version", range(5))
def test_api_versions_every_version_lists_itself(kafka_shim: KafkaShim, version: int) -> None:
    with WireClient(kafka_shim.bootstrap) as client:
        response = client.request(
            API_VERSIONS, version, {"client_software_name": "t", "client_software_version": "1"}
        )
    assert response.error_code == ErrorCode.NONE
    ranges = {k.api_key: (k.min_version, k.max_version) for k in response.api_keys}
    assert ranges[API_VERSIONS] == (0, 4)


def test_unsupported_api_versions_version_gets_error_35_in_a_v0_body(kafka_shim: KafkaShim) -> None:
    with WireClient(kafka_shim.bootstrap) as client:
        # A v99 request with a v2 header, as a newer client would send it.
        client.send_raw(struct.pack(">hhih", API_VERSIONS, 99, 7, 1) + b"x" + b"\x00" + b"\x00")
        frame = client.receive_frame()
    # Kafka's ApiVersionsRequest.getErrorResponse: error 35 and only ApiVersions' own range.
    assert frame == struct.pack(">ihihhh", 7, ErrorCode.UNSUPPORTED_VERSION, 1, API_VERSIONS, 0, 4)


def _assert_closed_and_others_served(
    broker: KafkaShim, payload: bytes, caplog: pytest.LogCaptureFixture, reason: str
) -> None:
    with WireClient(broker.bootstrap) as bystander, WireClient(broker.bootstrap) as offender:
        with caplog.at_level(logging.WARNING, logger="kafka_shim.server"):
            offender.sock.sendall(payload)
            assert offender.is_closed_by_peer()
        assert bystander.request(API_VERSIONS, 3, {}).error_code == ErrorCode.NONE
    lines = [r.getMessage() for r in caplog.records if "closing connection" in r.getMessage()]
    assert len(lines) == 1 and reason in lines[0]


def test_unknown_api_key_closes_only_that_connection(
    kafka_shim: KafkaShim, caplog: pytest.LogCaptureFixture
) -> None:
    payload = struct.pack(">hhih", 9999, 0, 1, -1)
    _assert_closed_and_others_served(
        kafka_shim, struct.pack(">i", len(payload)) + payload, caplog, "unknown api key 9999"
    )


def test_oversize_frame_is_refused_before_allocation(
    kafka_shim_factory: object, caplog: pytest.LogCaptureFixture
) -> None:
    broker = kafka_shim_factory(max_request_bytes=1024)  # type: ignore[operator]
    _assert_closed_and_others_served(broker, struct.pack(">i", 1 << 30), caplog, "frame length 1073741824")


def test_negative_frame_length_closes(kafka_shim: KafkaShim, caplog: pytest.LogCaptureFixture) -> None:
    _assert_closed_and_others_served(kafka_shim, struct.pack(">i", -5), caplog, "frame length -5")


def test_truncated_header_closes(kafka_shim: KafkaShim, caplog: pytest.LogCaptureFixture) -> None:
    _assert_closed_and_others_served(
        kafka_shim, struct.pack(">i", 3) + b"\x00\x12\x00", caplog, "shorter than"
    )


def test_malformed_body_closes(kafka_shim: KafkaShim, caplog: pytest.LogCaptureFixture) -> None:
    # ApiVersions v3 whose client_software_name claims 100 bytes that are not there.
    payload = struct.pack(">hhih", API_VERSIONS, 3, 1, -1) + b"\x00" + b"\x65abc"
    _assert_closed_and_others_served(
        kafka_shim, struct.pack(">i", len(payload)) + payload, caplog, "malformed ApiVersions v3"
    )


def test_unsupported_version_of_other_api_closes(
    kafka_shim: KafkaShim, caplog: pytest.LogCaptureFixture
) -> None:
    # Kafka cannot parse the header of a version it does not know, so it closes.
    payload = struct.pack(">hhih", 3, 99, 1, -1)  # Metadata v99
    _assert_closed_and_others_served(
        kafka_shim, struct.pack(">i", len(payload)) + payload, caplog, "unsupported Metadata version 99"
    )


def test_pipelined_requests_are_answered_in_order(kafka_shim: KafkaShim) -> None:
    with WireClient(kafka_shim.bootstrap) as client:
        frames = [client.frame(API_VERSIONS, v % 5, {}) for v in range(20)]
        client.sock.sendall(b"".join(struct.pack(">i", len(f)) + f for f in frames))
        correlations = [struct.unpack_from(">i", client.receive_frame())[0] for _ in frames]
    assert correlations == list(range(1, 21))


def test_an_append_wakes_only_the_fetches_waiting_on_that_partition() -> None:
    import trio
    import trio.testing

    from kafka_shim.shim.server import AppendWaiters
    from kafka_shim.storage.memory import MemoryLog

    waiters = AppendWaiters()
    orders, offsets = MemoryLog(), MemoryLog()
    woken: list[str] = []

    async def fetch(name: str, logs: list[MemoryLog]) -> None:
        await waiters.wait(logs, timeout_s=1.0)
        woken.append(name)

    async def main() -> None:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(fetch, "orders-consumer", [orders])
            nursery.start_soon(fetch, "both", [orders, offsets])
            await trio.testing.wait_all_tasks_blocked()
            waiters.notify(offsets)  # e.g. an offset commit
            await trio.testing.wait_all_tasks_blocked()
            assert woken == ["both"]
            waiters.notify(orders)
        assert sorted(woken) == ["both", "orders-consumer"]

    trio.run(main)


def test_a_frame_larger_than_a_read_arriving_in_pieces_is_read_whole(kafka_shim: KafkaShim) -> None:
    with WireClient(kafka_shim.bootstrap) as client:
        large = client.frame(API_VERSIONS, 3, {"client_software_name": "x" * 300_000})
        small = client.frame(API_VERSIONS, 3, {})
        data = struct.pack(">i", len(large)) + large + struct.pack(">i", len(small)) + small
        for start in range(0, len(data), 50_000):
            client.sock.sendall(data[start : start + 50_000])
        correlations = [struct.unpack_from(">i", client.receive_frame())[0] for _ in range(2)]
    assert correlations == [1, 2]


def test_debug_log_traces_each_request_and_answer_on_one_line(
    kafka_shim: KafkaShim, caplog: pytest.LogCaptureFixture
) -> None:
    hello = {"client_software_name": "tracer", "client_software_version": "1"}
    with (
        caplog.at_level(logging.DEBUG, logger="kafka_shim.requests"),
        WireClient(kafka_shim.bootstrap) as client,
    ):
        client.request(API_VERSIONS, 3, hello)
    (line,) = [r.getMessage() for r in caplog.records if r.name == "kafka_shim.requests"]
    assert line.startswith("ApiVersions v3 from 127.0.0.1:")
    assert "tracer" in line and "'api_keys'" in line and "\n" not in line


def test_a_busy_polled_connection_does_not_hold_up_the_others(kafka_shim_factory: object) -> None:
    # A busy-poll window far longer than the test: the quick peer's task is polling for
    # its next request the whole time the other connection is served.
    # The other client's socket timeout is the deadline: without yielding, its request
    # would wait out the whole window and time out.
    broker = kafka_shim_factory(busy_poll_us=30_000_000)  # type: ignore[operator]
    with WireClient(broker.bootstrap) as quick, WireClient(broker.bootstrap, timeout_s=10) as other:
        for _ in range(3):  # answered at once, so from now on polled after each answer
            assert quick.request(API_VERSIONS, 3, {}).error_code == ErrorCode.NONE
        assert other.request(API_VERSIONS, 3, {}).error_code == ErrorCode.NONE
        assert quick.request(API_VERSIONS, 3, {}).error_code == ErrorCode.NONE
