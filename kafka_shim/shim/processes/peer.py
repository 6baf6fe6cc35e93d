"""One request from a broker process to another broker process, over that process's Kafka
listener, as Kafka's brokers talk to each other (forwarding to the controller, sending
transaction markers to a partition's leader): a connection per call, the request's bytes as a
client sends them (through TLS and a SASL login on a secured listener, shim.processes.peer_route),
the answer parsed with the same schemas."""

from __future__ import annotations

import struct
from collections.abc import Mapping
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
    try:
        with trio.fail_after(timeout_s):
            stream: trio.abc.Stream = await trio.open_tcp_stream(*address)
            if route is not None and route.ssl_context is not None:
                stream = trio.SSLStream(stream, route.ssl_context, server_hostname=address[0])
            async with stream:
                if route is not None and route.login is not None:
                    await _login(stream, route.login, peer)
                return await _exchange(stream, api, version, request, peer)
    except trio.TooSlowError as exc:
        raise PeerCallError(f"no {api.name} answer from {peer} in {timeout_s:g} s") from exc
    except (OSError, EOFError, trio.BrokenResourceError) as exc:
        # trio's BrokenResourceError says nothing itself: a failed TLS handshake is its cause.
        reason = exc if str(exc) or exc.__cause__ is None else exc.__cause__
        raise PeerCallError(f"{api.name} to {peer}: {reason}") from exc


async def _exchange(
    stream: trio.abc.Stream, api: Api, version: int, request: Mapping[str, Any], peer: str
) -> Any:
    """Send one request, read and parse its answer."""
    header = RequestHeader.build(
        {
            "request_api_key": api.key,
            "request_api_version": version,
            "correlation_id": 1,
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
