"""Fuzzed frames never crash the server or disturb another connection.

Requests are generated from the declarations for every advertised API and
version: structurally valid ones (which must be answered or held without any
handler error), then truncated and bit-flipped copies (which must be answered
or cleanly closed). After every example a bystander connection must still get
its ApiVersions answer. The last tests are a fast slice of `python -m bench.fuzz`.
"""

from __future__ import annotations

import contextlib
import logging
import socket
import struct
import threading
import time
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bench.fuzz import Tally, send_frames
from bench.fuzz_frames import _NAMES, _ODD_NAMES, FrameGenerator, decode_request
from kafka_shim.protocol.types import ProtocolError
from kafka_shim.shim.config.broker_config import BrokerConfig
from kafka_shim.shim.handlers import ADVERTISED_APIS
from kafka_shim.shim.server import BrokerThread
from tests.strategies import message_values
from tests.wire import WireClient, encode_request

API_VERSIONS = 18
# Frames that may legitimately be held open (JoinGroup waits for other members,
# Fetch long-polls) are given this long before the fuzzer moves on.
ANSWER_WAIT_S = 0.3

API_VERSION_PAIRS = sorted(
    (key, version)
    for key, api in ADVERTISED_APIS.items()
    for version in range(api.versions.low, api.versions.high + 1)
)


class ErrorLog(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


@pytest.fixture(scope="module")
def fuzz_target() -> Iterator[tuple[BrokerThread, ErrorLog]]:
    errors = ErrorLog()
    logging.getLogger("kafka_shim").addHandler(errors)
    broker = BrokerThread(
        BrokerConfig(host="127.0.0.1", port=0, max_request_bytes=1 << 20, num_partitions=1)
    ).start()
    yield broker, errors
    broker.stop()
    logging.getLogger("kafka_shim").removeHandler(errors)


@st.composite
def valid_frames(draw: st.DrawFn) -> tuple[int, int, bytes]:
    key, version = draw(st.sampled_from(API_VERSION_PAIRS))
    api = ADVERTISED_APIS[key]
    body = draw(message_values(api.request, version))
    return key, version, encode_request(key, version, 1, body)


def _send(broker: BrokerThread, payload: bytes) -> None:
    with socket.create_connection(
        ("127.0.0.1", broker.broker.advertised_port), timeout=ANSWER_WAIT_S
    ) as sock:
        sock.sendall(struct.pack(">i", len(payload)) + payload)
        # A frame held by the broker (a join waiting for members) is allowed.
        with contextlib.suppress(TimeoutError):
            sock.recv(1 << 16)


def _bystander_served(broker: BrokerThread) -> None:
    with WireClient(broker.bootstrap, timeout_s=5) as client:
        assert client.request(API_VERSIONS, 3, {}).error_code == 0


FUZZ_SETTINGS = settings(
    max_examples=600,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    derandomize=True,
)


@FUZZ_SETTINGS
@given(frame=valid_frames())
def test_valid_requests_never_raise_in_handlers(
    fuzz_target: tuple[BrokerThread, ErrorLog], frame: tuple[int, int, bytes]
) -> None:
    broker, errors = fuzz_target
    key, version, payload = frame
    _send(broker, payload)
    _bystander_served(broker)
    assert not errors.messages, f"api {key} v{version}: {errors.messages}"


@FUZZ_SETTINGS
@given(frame=valid_frames(), data=st.data())
def test_truncated_and_bit_flipped_frames_are_refused_cleanly(
    fuzz_target: tuple[BrokerThread, ErrorLog], frame: tuple[int, int, bytes], data: st.DataObject
) -> None:
    broker, errors = fuzz_target
    key, version, payload = frame
    if data.draw(st.booleans(), label="truncate"):
        cut = data.draw(st.integers(0, max(len(payload) - 1, 0)), label="cut")
        mutated = payload[:cut]
    else:
        flipped = bytearray(payload)
        for _ in range(data.draw(st.integers(1, 4), label="flips")):
            bit = data.draw(st.integers(0, len(flipped) * 8 - 1), label="bit")
            flipped[bit // 8] ^= 1 << (bit % 8)
        mutated = bytes(flipped)
    _send(broker, mutated)
    _bystander_served(broker)
    assert not errors.messages, f"api {key} v{version} mutated: {errors.messages}"


# --- a fast slice of the campaign (python -m bench.fuzz runs a million frames) -----------------


def test_decoders_raise_only_protocol_errors_on_campaign_frames() -> None:
    generate = FrameGenerator(seed=7).frame
    for _ in range(5000):
        key, version, mutation, frame = generate()
        try:
            decode_request(frame[4:])
        except ProtocolError:
            assert mutation != "valid", (key, version)


def test_campaign_frames_over_concurrent_connections_leave_the_broker_serving(
    fuzz_target: tuple[BrokerThread, ErrorLog],
) -> None:
    broker, errors = fuzz_target
    tally = Tally()
    address = ("127.0.0.1", broker.broker.advertised_port)
    senders = [threading.Thread(target=send_frames, args=(address, seed, 400, tally)) for seed in range(4)]
    for sender in senders:
        sender.start()
    for sender in senders:
        sender.join(120)
    assert sum(tally.outcomes.values()) == 1600
    assert tally.outcomes["answered"] and tally.outcomes["closed"]
    _bystander_served(broker)
    assert not errors.messages
    assert _memory_returns(broker)


def _memory_returns(broker: BrokerThread) -> bool:
    """Held frames (an announced length longer than what was sent) are released once
    their connections close: wait for the broker to notice."""
    deadline = time.monotonic() + 5
    while broker.server.memory.pool.used and time.monotonic() < deadline:
        time.sleep(0.01)
    return broker.server.memory.pool.used == 0


def test_campaign_strings_come_from_a_fixed_pool() -> None:
    """Valid frames create groups, transactional ids and users, which the broker keeps as Kafka
    does: however many frames and senders, the campaign names only so many of them, or its RSS
    would measure the names it invented."""
    pool = set(_NAMES) | set(_ODD_NAMES)
    for seed in range(8):
        generate = FrameGenerator(seed)
        assert {generate._content("string") for _ in range(2000)} <= {name.encode() for name in pool}
