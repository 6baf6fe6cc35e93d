"""A minimal blocking wire client for tests, built on the project's own schemas."""

from __future__ import annotations

import socket
import struct
from typing import Any

from construct import Container

from kafka_shim.protocol.headers import RequestHeader
from kafka_shim.protocol.messages import APIS

_LENGTH = struct.Struct(">i")


def encode_request(
    api_key: int, version: int, correlation_id: int, body: dict[str, Any], client_id: str = "wire-test"
) -> bytes:
    """Header and body of a request, without the length prefix."""
    api = APIS[api_key]
    header = RequestHeader.build(
        {
            "request_api_key": api_key,
            "request_api_version": version,
            "correlation_id": correlation_id,
            "client_id": client_id,
        },
        2 if api.is_flexible(version) else 1,
    )
    return header + api.request.build(body, version)


class WireClient:
    def __init__(self, bootstrap: str, timeout_s: float = 5.0) -> None:
        host, port = bootstrap.rsplit(":", 1)
        self.sock = socket.create_connection((host, int(port)), timeout=timeout_s)
        self._correlation = 0

    def close(self) -> None:
        self.sock.close()

    def __enter__(self) -> WireClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def send_raw(self, payload: bytes) -> None:
        self.sock.sendall(_LENGTH.pack(len(payload)) + payload)

    def frame(self, api_key: int, version: int, body: dict[str, Any]) -> bytes:
        self._correlation += 1
        return encode_request(api_key, version, self._correlation, body)

    def receive_frame(self) -> bytes:
        size = _LENGTH.unpack(self._read_exactly(4))[0]
        return self._read_exactly(size)

    def _read_exactly(self, size: int) -> bytes:
        data = bytearray()
        while len(data) < size:
            chunk = self.sock.recv(size - len(data))
            if not chunk:
                raise ConnectionError("broker closed the connection")
            data += chunk
        return bytes(data)

    def request(self, api_key: int, version: int, body: dict[str, Any]) -> Container:
        self.send_raw(self.frame(api_key, version, body))
        frame = self.receive_frame()
        correlation = _LENGTH.unpack_from(frame)[0]
        assert correlation == self._correlation, (correlation, self._correlation)
        api = APIS[api_key]
        offset = 4
        if api.response_header_flexible(version):
            offset += 1  # empty tagged-field section
        return api.response.parse(frame[offset:], version)

    def is_closed_by_peer(self) -> bool:
        try:
            return self.sock.recv(1) == b""
        except ConnectionResetError:
            return True
