"""Request and response headers.

Request header v1 for classic request versions and v2 for flexible ones; the
response header is v0 or v1 likewise, except ApiVersions, whose response header
is always v0 so that a client can read it before it knows what we speak.
"""

from __future__ import annotations

import struct

from kafka_shim.protocol.file_records import Spliced
from kafka_shim.protocol.schema import INT16, INT32, STRING, Field, Message
from kafka_shim.protocol.types import ProtocolError

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


# Read and written by hand, with one struct call each: they are on every request.
_API_VERSION_CORRELATION = struct.Struct(">hhi")
_CLIENT_ID_SIZE = struct.Struct(">h")
_SIZE_AND_CORRELATION = struct.Struct(">ii")
_NO_TAGGED_FIELDS = b"\x00"


def peek_api(frame: bytes) -> tuple[int, int, int]:
    """api_key, api_version, correlation_id: readable before the schema is known."""
    if len(frame) < 8:
        raise ProtocolError(f"frame of {len(frame)} bytes is shorter than a request header")
    api_key, api_version, correlation_id = _API_VERSION_CORRELATION.unpack_from(frame)
    return api_key, api_version, correlation_id


def parse_request_header(frame: bytes, flexible: bool) -> tuple[str | None, int]:
    """The client id of the header at the start of `frame` (its fixed fields are what
    `peek_api` read), and where the body begins."""
    # On every request: the usual header (a client id, no tagged fields) is read by hand;
    # anything else (a null client id, tags, a short or undecodable one) by the schema.
    if len(frame) >= 10:
        (size,) = _CLIENT_ID_SIZE.unpack_from(frame, 8)
        end = 10 + size
        if size >= 0 and end < len(frame) + (not flexible) and (not flexible or frame[end] == 0):
            try:
                return frame[10:end].decode(), end + flexible
            except UnicodeDecodeError:
                pass
    header, end = RequestHeader.parse_at(frame, 0, 2 if flexible else 1)
    return header.client_id, end


def spliced_response_frame(correlation_id: int, flexible: bool, body: Spliced) -> Spliced:
    """`response_frame` of a body holding records left in their files."""
    size = len(body) + (5 if flexible else 4)
    header = _SIZE_AND_CORRELATION.pack(size, correlation_id) + (_NO_TAGGED_FIELDS if flexible else b"")
    return body.prefixed(header)


def response_frame(correlation_id: int, flexible: bool, body: bytes) -> bytes:
    """A whole response frame: its size, the response header (v1 when `flexible`: never
    any tagged fields) and `body`."""
    if flexible:
        return b"".join((_SIZE_AND_CORRELATION.pack(len(body) + 5, correlation_id), _NO_TAGGED_FIELDS, body))
    return _SIZE_AND_CORRELATION.pack(len(body) + 4, correlation_id) + body
