"""A request from one broker process to another (shim.processes.peer): answered by a real
broker, every way a peer can fail to answer named as PeerCallError, and the connections kept
between calls (PeerConnections) reused, dropped when they fail and closed at the end."""

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
from kafka_shim.shim.processes.peer import MAX_IDLE_PER_PEER, PeerCallError, PeerConnections, call
from kafka_shim.shim.processes.peer_route import PeerRoute

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


def plaintext(at: tuple[str, int]) -> tuple[tuple[str, int], PeerRoute]:
    return at, PeerRoute("PLAINTEXT", None, None)


class CountingProxy:
    """A TCP proxy in front of a real broker: counts the connections it accepts, and closes
    every one it carries on `drop` (a peer that restarted, or closed them as idle)."""

    def __init__(self, broker: tuple[str, int]) -> None:
        self.broker = broker
        self.accepted = 0
        self.open = 0
        self._scopes: list[trio.CancelScope] = []

    async def carry(self, client: trio.SocketStream) -> None:
        self.accepted += 1
        self.open += 1
        try:
            with trio.CancelScope() as scope:
                self._scopes.append(scope)
                async with await trio.open_tcp_stream(*self.broker) as server, trio.open_nursery() as pipes:
                    pipes.start_soon(self._pipe, client, server, pipes.cancel_scope)
                    pipes.start_soon(self._pipe, server, client, pipes.cancel_scope)
        finally:
            self.open -= 1
            await trio.aclose_forcefully(client)

    @staticmethod
    async def _pipe(source: trio.SocketStream, sink: trio.SocketStream, done: trio.CancelScope) -> None:
        try:
            while data := await source.receive_some():
                await sink.send_all(data)
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            pass
        done.cancel()

    def drop(self) -> None:
        for scope in self._scopes:
            scope.cancel()
        self._scopes.clear()

    async def closed(self) -> None:
        """Wait (a deadline, not a sleep) until every carried connection has ended."""
        with trio.fail_after(5):
            while self.open:
                await trio.sleep(0.01)


def through_proxy(shim: KafkaShim, test: Callable[[CountingProxy, tuple[str, int]], Awaitable[None]]) -> None:
    proxy = CountingProxy(address(shim))

    async def main() -> None:
        async with trio.open_nursery() as nursery:
            listeners = await nursery.start(partial(trio.serve_tcp, proxy.carry, 0, host="127.0.0.1"))
            await test(proxy, ("127.0.0.1", listeners[0].socket.getsockname()[1]))
            nursery.cancel_scope.cancel()

    trio.run(main)


def test_calls_reuse_one_connection_and_close_it_at_the_end(kafka_shim: KafkaShim) -> None:
    async def check(proxy: CountingProxy, at: tuple[str, int]) -> None:
        async with PeerConnections() as connections:
            for version in (0, 9, 12, 12, 12):
                answer = await connections.call(plaintext(at), METADATA, version, NO_TOPICS, 5.0)
                assert [b.port for b in answer.brokers] == [address(kafka_shim)[1]]
            assert proxy.accepted == 1 and connections.idle(at) == 1
        await proxy.closed()  # none outlives its owner

    through_proxy(kafka_shim, check)


def test_a_connection_the_peer_dropped_is_replaced(kafka_shim: KafkaShim) -> None:
    async def check(proxy: CountingProxy, at: tuple[str, int]) -> None:
        async with PeerConnections() as connections:
            await connections.call(plaintext(at), METADATA, 12, NO_TOPICS, 5.0)
            proxy.drop()  # as a peer restarting, or closing an idle connection
            await proxy.closed()
            answer = await connections.call(plaintext(at), METADATA, 12, NO_TOPICS, 5.0)
            assert answer.brokers and proxy.accepted == 2 and connections.idle(at) == 1

    through_proxy(kafka_shim, check)


def test_concurrent_calls_each_get_a_connection_and_few_are_kept(kafka_shim: KafkaShim) -> None:
    async def check(proxy: CountingProxy, at: tuple[str, int]) -> None:
        async with PeerConnections() as connections:
            async with trio.open_nursery() as nursery:
                for _ in range(MAX_IDLE_PER_PEER + 2):
                    nursery.start_soon(connections.call, plaintext(at), METADATA, 12, NO_TOPICS, 5.0)
            assert connections.idle(at) == MAX_IDLE_PER_PEER  # the others were closed
            with trio.fail_after(5):
                while proxy.open > MAX_IDLE_PER_PEER:
                    await trio.sleep(0.01)
        await proxy.closed()

    through_proxy(kafka_shim, check)


@pytest.mark.parametrize(
    ("peer", "says"), [(closes, "closed the connection"), (never_answers, "no Metadata answer")]
)
def test_a_kept_connection_that_fails_is_dropped(peer: Peer, says: str) -> None:
    """A failed call (an answer never read, or half read) keeps nothing: its stream is closed."""

    async def check(at: tuple[str, int]) -> None:
        async with PeerConnections() as connections:
            for _ in range(2):
                with pytest.raises(PeerCallError, match=says):
                    await connections.call(plaintext(at), METADATA, 12, NO_TOPICS, 0.3)
                assert connections.idle(at) == 0

    trio.run(serving, peer, check)
