"""One request from a broker process to another broker process, over that process's Kafka
listener, as Kafka's brokers talk to each other (forwarding to the controller, sending
transaction markers to a partition's leader): the request's bytes as a client sends them
(through TLS and a SASL login on a secured listener, shim.processes.peer_route), the answer
parsed with the same schemas. `call` opens a connection for one call; PeerConnections keeps
them for the next call, as Kafka's brokers keep their inter-broker connections, so that a
transaction's WriteTxnMarkers costs a request, not a connect (and a login) and a request."""

from __future__ import annotations

import contextlib
import itertools
import struct
from collections.abc import Iterator, Mapping
from types import TracebackType
from typing import Any

import trio

from kafka_shim.protocol.api import Api
from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.protocol.headers import RequestHeader
from kafka_shim.protocol.messages.sasl_authenticate import API as SASL_AUTHENTICATE
from kafka_shim.protocol.messages.sasl_handshake import API as SASL_HANDSHAKE
from kafka_shim.protocol.types import ProtocolError
from kafka_shim.shim.processes.peer_route import PeerLogin, PeerRoute, UnprovenServer

_LENGTH = struct.Struct(">i")
CLIENT_ID = "kafka-shim-broker"
# A peer's answer never needs more: past it the frame is refused as Kafka's clients refuse one
# (socket.request.max.bytes is the broker's own bound the other way).
MAX_ANSWER_BYTES = 100 * 1024 * 1024


# Connections kept idle to one peer: one serves a sender that has one request in flight per
# leader (shim.processes.marker_sender); the others are the checks of concurrent writes.
MAX_IDLE_PER_PEER = 4

# Where another broker process listens and how to pass its listener.
Peer = tuple[tuple[str, int], PeerRoute]


class PeerCallError(Exception):
    """The peer could not be reached, closed the connection, did not answer in time, or
    answered bytes that are not a response; the message names which and the peer."""


async def call(
    address: tuple[str, int],
    api: Api,
    version: int,
    request: Mapping[str, Any],
    timeout_s: float,
    route: PeerRoute | None = None,
) -> Any:
    """`api`'s response at `version` from the broker at `address` to `request`, through TLS and
    a SASL login where `route` has them; PeerCallError when there is none."""
    peer = f"{address[0]}:{address[1]}"
    with _named_failures(api, peer, timeout_s), trio.fail_after(timeout_s):
        stream = await _connect(address, route, peer)
        async with stream:
            return await _exchange(stream, api, version, request, peer)


class _Connection:
    """A connection to a peer, logged in, and the correlation id of its next request."""

    def __init__(self, stream: trio.abc.Stream) -> None:
        self.stream = stream
        self.correlation_ids = itertools.count(1)


class PeerConnections:
    """Connections to other broker processes, kept between calls: a call takes an idle one
    (or connects), and gives it back once answered; one that failed, timed out or was cancelled
    mid-call is closed (its stream may hold half a request or answer), and the next call
    connects anew. Every connection is closed when the owner's `async with` ends."""

    def __init__(self) -> None:
        self._idle: dict[tuple[str, int], list[_Connection]] = {}
        self._closed = False

    async def __aenter__(self) -> PeerConnections:
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._closed = True
        idle, self._idle = self._idle, {}
        for connections in idle.values():
            for connection in connections:
                await trio.aclose_forcefully(connection.stream)

    def idle(self, address: tuple[str, int]) -> int:
        """How many connections to `address` wait for a call."""
        return len(self._idle.get(address, ()))

    async def call(
        self, peer: Peer, api: Api, version: int, request: Mapping[str, Any], timeout_s: float
    ) -> Any:
        """As `call`, over a kept connection. A kept connection the peer closed while it was
        idle (connections.max.idle.ms, a restart) fails before any answer: the request is sent
        once more over a new one, within the same timeout (every call made here may be
        repeated: markers are sent again until written, checks change nothing twice)."""
        address, route = peer
        name = f"{address[0]}:{address[1]}"
        with _named_failures(api, name, timeout_s), trio.fail_after(timeout_s):
            idle = self._idle.get(address)
            if idle:
                connection = idle.pop()
                try:
                    return await self._exchange(connection, address, api, version, request, name)
                except (OSError, EOFError, trio.BrokenResourceError):
                    pass  # closed by the peer while idle: a new connection below
            connection = _Connection(await _connect(address, route, name))
            return await self._exchange(connection, address, api, version, request, name)

    async def _exchange(
        self,
        connection: _Connection,
        address: tuple[str, int],
        api: Api,
        version: int,
        request: Mapping[str, Any],
        peer: str,
    ) -> Any:
        try:
            answer = await _exchange(
                connection.stream, api, version, request, peer, next(connection.correlation_ids)
            )
        except BaseException:
            await trio.aclose_forcefully(connection.stream)
            raise
        kept = self._idle.setdefault(address, [])
        if self._closed or len(kept) >= MAX_IDLE_PER_PEER:
            await trio.aclose_forcefully(connection.stream)
        else:
            kept.append(connection)
        return answer


@contextlib.contextmanager
def _named_failures(api: Api, peer: str, timeout_s: float) -> Iterator[None]:
    """Every way a call fails, as a PeerCallError naming the API and the peer."""
    try:
        yield
    except trio.TooSlowError as exc:
        raise PeerCallError(f"no {api.name} answer from {peer} in {timeout_s:g} s") from exc
    except (OSError, EOFError, trio.BrokenResourceError) as exc:
        # trio's BrokenResourceError says nothing itself: a failed TLS handshake is its cause.
        reason = exc if str(exc) or exc.__cause__ is None else exc.__cause__
        raise PeerCallError(f"{api.name} to {peer}: {reason}") from exc


async def _connect(address: tuple[str, int], route: PeerRoute | None, peer: str) -> trio.abc.Stream:
    """A connection to `address`, through TLS and logged in where `route` has them."""
    stream: trio.abc.Stream = await trio.open_tcp_stream(*address)
    try:
        if route is not None and route.ssl_context is not None:
            stream = trio.SSLStream(stream, route.ssl_context, server_hostname=address[0])
        if route is not None and route.login is not None:
            await _login(stream, route.login, peer)
    except BaseException:
        await trio.aclose_forcefully(stream)
        raise
    return stream


async def _exchange(
    stream: trio.abc.Stream,
    api: Api,
    version: int,
    request: Mapping[str, Any],
    peer: str,
    correlation_id: int = 1,
) -> Any:
    """Send one request, read and parse its answer."""
    header = RequestHeader.build(
        {
            "request_api_key": api.key,
            "request_api_version": version,
            "correlation_id": correlation_id,
            "client_id": CLIENT_ID,
        },
        2 if api.is_flexible(version) else 1,
    )
    payload = header + api.request.build(request, version)
    await stream.send_all(_LENGTH.pack(len(payload)) + payload)
    (size,) = _LENGTH.unpack(await _read(stream, _LENGTH.size))
    if not 4 <= size <= MAX_ANSWER_BYTES:
        raise PeerCallError(f"{api.name} answer of {size} bytes from {peer}")
    answer = await _read(stream, size)
    (answered,) = _LENGTH.unpack_from(answer)
    if answered != correlation_id:  # a connection out of step: closed by the caller
        raise PeerCallError(f"{api.name} answer from {peer} to request {answered}, not {correlation_id}")
    body_at = 5 if api.response_header_flexible(version) else 4  # after the correlation id (and tags)
    try:
        return api.response.parse(answer[body_at:], version)
    except ProtocolError as exc:
        raise PeerCallError(f"{api.name} answer from {peer} unreadable: {exc}") from exc


async def _login(stream: trio.abc.Stream, login: PeerLogin, peer: str) -> None:
    """SaslHandshake, then SaslAuthenticate with each of the login's tokens (as a client after
    a v1 handshake); PeerCallError naming the peer and user when refused."""
    handshake = await _exchange(stream, SASL_HANDSHAKE, 1, {"mechanism": login.mechanism}, peer)
    refused = f"{peer} refused the {login.mechanism} login as {login.username}"
    if handshake.error_code != ErrorCode.NONE:
        raise PeerCallError(f"{refused}: error {handshake.error_code}")
    tokens = login.tokens()
    token = next(tokens)
    while True:
        answer = await _exchange(stream, SASL_AUTHENTICATE, 2, {"auth_bytes": token}, peer)
        if answer.error_code != ErrorCode.NONE:
            raise PeerCallError(f"{refused}: {answer.error_message}")
        try:
            token = tokens.send(answer.auth_bytes)
        except StopIteration:
            return
        except UnprovenServer as exc:
            raise PeerCallError(f"{refused}: {exc}") from exc


async def _read(stream: trio.abc.ReceiveStream, size: int) -> bytes:
    data = bytearray()
    while len(data) < size:
        chunk = await stream.receive_some(size - len(data))
        if not chunk:
            raise EOFError("the peer closed the connection before answering")
        data += chunk
    return bytes(data)
