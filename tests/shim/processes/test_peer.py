"""A request from one broker process to another (shim.processes.peer): answered by a real
broker, and every way a peer can fail to answer named as PeerCallError."""

from __future__ import annotations

import struct
from collections.abc import Awaitable, Callable
from functools import partial

import pytest
import trio

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.protocol.messages.api_versions import API as API_VERSIONS
from kafka_shim.protocol.messages.metadata import API as METADATA
from kafka_shim.pytest_plugin import KafkaShim
from kafka_shim.shim.processes.peer import PeerCallError, call

NO_TOPICS = {"topics": [], "allow_auto_topic_creation": False}
Peer = Callable[[trio.SocketStream], Awaitable[None]]


def address(shim: KafkaShim) -> tuple[str, int]:
    host, port = shim.bootstrap.rsplit(":", 1)
    return host, int(port)


@pytest.mark.parametrize("version", [0, 9, 12])  # classic and flexible headers
def test_metadata_answered_by_a_broker(kafka_shim: KafkaShim, version: int) -> None:
    answer = trio.run(call, address(kafka_shim), METADATA, version, NO_TOPICS, 5.0)
    assert [broker.port for broker in answer.brokers] == [address(kafka_shim)[1]]


def test_api_versions_answer_has_a_classic_header_at_every_version(kafka_shim: KafkaShim) -> None:
    answer = trio.run(call, address(kafka_shim), API_VERSIONS, 3, {}, 5.0)
    assert answer.error_code == ErrorCode.NONE
    assert METADATA.key in {api.api_key for api in answer.api_keys}


async def serving(answer: Peer, test: Callable[[tuple[str, int]], Awaitable[None]]) -> None:
    async with trio.open_nursery() as nursery:
        listeners = await nursery.start(partial(trio.serve_tcp, answer, 0, host="127.0.0.1"))
        port = listeners[0].socket.getsockname()[1]
        await test(("127.0.0.1", port))
        nursery.cancel_scope.cancel()


async def request_read(stream: trio.SocketStream) -> None:
    """Reads the whole request: closing with bytes unread would reset the connection."""
    data = b""
    while len(data) < 4 or len(data) < 4 + struct.unpack(">i", data[:4])[0]:
        data += await stream.receive_some()


async def closes(stream: trio.SocketStream) -> None:
    await request_read(stream)
    await stream.aclose()


async def never_answers(stream: trio.SocketStream) -> None:
    await trio.sleep_forever()


async def oversize(stream: trio.SocketStream) -> None:
    await request_read(stream)
    await stream.send_all(struct.pack(">i", 2**31 - 1))
    await trio.sleep_forever()


async def garbage(stream: trio.SocketStream) -> None:
    await request_read(stream)
    await stream.send_all(struct.pack(">i", 6) + b"\x00\x00\x00\x01\xff\xff")
    await trio.sleep_forever()


@pytest.mark.parametrize(
    ("peer", "says"),
    [
        (closes, "closed the connection"),
        (never_answers, "no Metadata answer"),
        (oversize, "answer of 2147483647 bytes"),
        (garbage, "unreadable"),
    ],
)
def test_a_peer_that_does_not_answer_is_named(peer: Peer, says: str) -> None:
    async def check(at: tuple[str, int]) -> None:
        with pytest.raises(PeerCallError, match=says) as raised:
            await call(at, METADATA, 12, NO_TOPICS, 0.5)
        assert f"{at[0]}:{at[1]}" in str(raised.value)

    trio.run(serving, peer, check)


def test_nobody_listening_is_named() -> None:
    async def check() -> None:
        with pytest.raises(PeerCallError, match=r"Metadata to 127\.0\.0\.1:1"):
            await call(
                ("127.0.0.1", 1), METADATA, 12, {"topics": [], "allow_auto_topic_creation": False}, 2.0
            )

    trio.run(check)
