"""Request and response headers.

Request header v1 for classic request versions and v2 for flexible ones; the
response header is v0 or v1 likewise, except ApiVersions, whose response header
is always v0 so that a client can read it before it knows what we speak.
"""

from __future__ import annotations

from kafka_shim.protocol.schema import INT16, INT32, STRING, Field, Message
from kafka_shim.protocol.types import ProtocolError, encode_uvarint

RequestHeader = Message(
    "RequestHeader",
    versions="0-2",
    flexible="2+",
    fields=[
        Field("request_api_key", INT16),
        Field("request_api_version", INT16),
        Field("correlation_id", INT32),
        # client_id keeps its classic encoding in header v2.
        Field("client_id", STRING, "1+", nullable="1+", flexible="none", default=None),
    ],
)

ResponseHeader = Message(
    "ResponseHeader",
    versions="0-1",
    flexible="1+",
    fields=[Field("correlation_id", INT32)],
)


def peek_api(frame: bytes) -> tuple[int, int, int]:
    """api_key, api_version, correlation_id: readable before the schema is known."""
    if len(frame) < 8:
        raise ProtocolError(f"frame of {len(frame)} bytes is shorter than a request header")
    return (
        int.from_bytes(frame[0:2], "big", signed=True),
        int.from_bytes(frame[2:4], "big", signed=True),
        int.from_bytes(frame[4:8], "big", signed=True),
    )


def parse_request_header(frame: bytes, flexible: bool) -> tuple[str | None, int]:
    """The client id of the header at the start of `frame` (its fixed fields are what
    `peek_api` read), and where the body begins."""
    # On every request: the usual header (a client id, no tagged fields) is read by hand;
    # anything else (a null client id, tags, a short or undecodable one) by the schema.
    size = int.from_bytes(frame[8:10], "big", signed=True)
    end = 10 + size
    usual = len(frame) >= 10 and size >= 0 and end < len(frame) + (not flexible)
    if usual and (not flexible or frame[end] == 0):
        try:
            return frame[10:end].decode(), end + flexible
        except UnicodeDecodeError:
            pass
    header, end = RequestHeader.parse_at(frame, 0, 2 if flexible else 1)
    return header.client_id, end


def response_header(correlation_id: int, flexible: bool) -> bytes:
    # Built by hand: it is on every response and never carries tagged fields.
    head = correlation_id.to_bytes(4, "big", signed=True)
    return head + encode_uvarint(0) if flexible else head
