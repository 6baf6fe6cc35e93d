"""One request from a broker process to another broker process, over that process's Kafka
listener, as Kafka's brokers talk to each other (forwarding to the controller, sending
transaction markers to a partition's leader): a connection per call, the request's bytes as a
client sends them, the answer parsed with the same schemas."""

from __future__ import annotations

import struct
from collections.abc import Mapping
from typing import Any

import trio

from kafka_shim.protocol.api import Api
from kafka_shim.protocol.headers import RequestHeader
from kafka_shim.protocol.types import ProtocolError

_LENGTH = struct.Struct(">i")
CLIENT_ID = "kafka-shim-broker"
# A peer's answer never needs more: past it the frame is refused as Kafka's clients refuse one
# (socket.request.max.bytes is the broker's own bound the other way).
MAX_ANSWER_BYTES = 100 * 1024 * 1024


class PeerCallError(Exception):
    """The peer could not be reached, closed the connection, did not answer in time, or
    answered bytes that are not a response; the message names which and the peer."""


async def call(
    address: tuple[str, int], api: Api, version: int, request: Mapping[str, Any], timeout_s: float
) -> Any:
    """`api`'s response at `version` from the broker at `address` to `request`; PeerCallError
    when there is none."""
    peer, flexible = f"{address[0]}:{address[1]}", api.is_flexible(version)
    header = RequestHeader.build(
        {
            "request_api_key": api.key,
            "request_api_version": version,
            "correlation_id": 1,
            "client_id": CLIENT_ID,
        },
        2 if flexible else 1,
    )
    payload = header + api.request.build(request, version)
    try:
        with trio.fail_after(timeout_s):
            stream = await trio.open_tcp_stream(*address)
            async with stream:
                await stream.send_all(_LENGTH.pack(len(payload)) + payload)
                (size,) = _LENGTH.unpack(await _read(stream, _LENGTH.size))
                if not 4 <= size <= MAX_ANSWER_BYTES:
                    raise PeerCallError(f"{api.name} answer of {size} bytes from {peer}")
                answer = await _read(stream, size)
    except trio.TooSlowError as exc:
        raise PeerCallError(
            f"no {api.name} answer from {address[0]}:{address[1]} in {timeout_s:g} s"
        ) from exc
    except (OSError, EOFError, trio.BrokenResourceError) as exc:
        raise PeerCallError(f"{api.name} to {address[0]}:{address[1]}: {exc}") from exc
    body_at = 5 if api.response_header_flexible(version) else 4  # after the correlation id (and tags)
    try:
        return api.response.parse(answer[body_at:], version)
    except ProtocolError as exc:
        raise PeerCallError(f"{api.name} answer from {peer} unreadable: {exc}") from exc


async def _read(stream: trio.SocketStream, size: int) -> bytes:
    data = bytearray()
    while len(data) < size:
        chunk = await stream.receive_some(size - len(data))
        if not chunk:
            raise EOFError("the peer closed the connection before answering")
        data += chunk
    return bytes(data)
