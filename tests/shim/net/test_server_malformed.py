"""Every class of malformed input, answered as Apache Kafka answers it.

Kafka parses a request with its generated readers: a length or count that runs
past the frame, a negative length where null is not allowed, or a varint longer
than five bytes fails the parse, and the broker closes that connection. Bytes
left over after the last field are ignored, unknown tagged fields are skipped,
-1 in a nullable field is null, and strings are decoded with replacement
characters: those requests are answered.
"""

from __future__ import annotations

import logging
import struct
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.protocol.messages import APIS
from kafka_shim.pytest_plugin import KafkaShim
from tests.wire import WireClient

DESCRIBE_GROUPS, METADATA, API_VERSIONS = 15, 3, 18
CORRELATION = 7


def header(api_key: int, version: int, flexible: bool) -> bytes:
    fixed = struct.pack(">hhih", api_key, version, CORRELATION, 1) + b"c"
    return fixed + b"\x00" if flexible else fixed  # header v2: an empty tagged-field section


def int16_string(text: bytes) -> bytes:
    return struct.pack(">h", len(text)) + text


def compact_string(text: bytes) -> bytes:
    return bytes([len(text) + 1]) + text


@dataclass(frozen=True)
class Case:
    name: str
    frame: bytes  # without the length prefix, unless `raw`
    answered: Callable[[Any], bool] | None = None  # None: the connection is closed
    close_reason: str = ""
    raw: bool = False
    api: tuple[int, int] = (DESCRIBE_GROUPS, 0)


def described(group_id: str) -> Callable[[Any], bool]:
    def check(response: Any) -> bool:
        return [(g.error_code, g.group_id, g.group_state) for g in response.groups] == [
            (ErrorCode.NONE, group_id, "Dead")
        ]

    return check


DG0 = header(DESCRIBE_GROUPS, 0, False)
DG5 = header(DESCRIBE_GROUPS, 5, True)
CASES = [
    Case("truncated string", DG0 + struct.pack(">i", 1) + struct.pack(">h", 5) + b"ab", None, "malformed"),
    Case("truncated header", struct.pack(">hh", DESCRIBE_GROUPS, 0), None, "shorter than a request header"),
    Case(
        "string length lying up",
        DG0 + struct.pack(">i", 1) + struct.pack(">h", 1000) + b"g",
        None,
        "malformed",
    ),
    Case(
        "string length lying down",
        DG0 + struct.pack(">i", 1) + struct.pack(">h", 3) + b"abcdef",
        described("abc"),
    ),
    Case("huge array", DG0 + struct.pack(">i", 2**31 - 1) + int16_string(b"g"), None, "malformed"),
    Case("negative string length", DG0 + struct.pack(">i", 1) + struct.pack(">h", -2), None, "malformed"),
    Case("null in a non-nullable array", DG0 + struct.pack(">i", -1), None, "malformed"),
    Case(
        "null in a nullable array (Metadata v1: all topics)",
        header(METADATA, 1, False) + struct.pack(">i", -1),
        lambda response: response.topics is not None,
        api=(METADATA, 1),
    ),
    Case(
        "unknown tagged fields in header and body",
        struct.pack(">hhih", DESCRIBE_GROUPS, 5, CORRELATION, 1)
        + b"c"
        + b"\x01\x09\x02zz"  # header: one tagged field, tag 9, 2 bytes
        + b"\x02"
        + compact_string(b"g")
        + b"\x00"  # include_authorized_operations
        + b"\x02\x05\x01x\x1f\x00",  # body: tags 5 and 31
        described("g"),
        api=(DESCRIBE_GROUPS, 5),
    ),
    Case(
        "invalid UTF-8, replaced as Java's String decoding does",
        DG0 + struct.pack(">i", 1) + int16_string(b"\xff\xfe"),
        described("\ufffd\ufffd"),
    ),
    Case(
        "tagged fields out of order",
        DG5 + b"\x02" + compact_string(b"g") + b"\x00" + b"\x02\x09\x00\x05\x00",
        described("g"),
        api=(DESCRIBE_GROUPS, 5),
    ),
    Case(
        "varint longer than five bytes",
        DG5 + b"\xff" * 6 + b"\x01",
        None,
        "malformed",
        api=(DESCRIBE_GROUPS, 5),
    ),
    Case(
        "bit flip in the api key",
        struct.pack(">hhih", -32768 | DESCRIBE_GROUPS, 0, 1, -1),
        None,
        "unknown api key",
    ),
    Case(
        "bit flip in the version",
        struct.pack(">hhih", DESCRIBE_GROUPS, 64, 1, -1),
        None,
        "unsupported DescribeGroups version 64",
    ),
    Case("negative frame length", struct.pack(">i", -5), None, "frame length -5", raw=True),
    Case(
        "frame length over socket.request.max.bytes",
        struct.pack(">i", 2**31 - 1),
        None,
        "frame length 2147483647",
        raw=True,
    ),
    Case(
        "an HTTP request",
        b"GET / HTTP/1.1\r\nHost: localhost:9092\r\n\r\n",
        None,
        "(an HTTP request on a Kafka listener",
        raw=True,
    ),
]


def _send(client: WireClient, case: Case) -> None:
    client.sock.sendall(case.frame if case.raw else struct.pack(">i", len(case.frame)) + case.frame)


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_malformed_input_is_answered_as_kafka_answers_it(
    kafka_shim: KafkaShim, caplog: pytest.LogCaptureFixture, case: Case
) -> None:
    with (
        caplog.at_level(logging.WARNING, logger="kafka_shim.server"),
        WireClient(kafka_shim.bootstrap) as client,
    ):
        _send(client, case)
        if case.answered is not None:
            frame = client.receive_frame()
            assert struct.unpack_from(">i", frame)[0] == CORRELATION
            key, version = case.api
            api = APIS[key]
            response = api.response.parse(frame[5 if api.response_header_flexible(version) else 4 :], version)
            assert case.answered(response), response
        else:
            assert client.is_closed_by_peer()
        with WireClient(kafka_shim.bootstrap) as bystander:
            assert bystander.request(API_VERSIONS, 3, {}).error_code == ErrorCode.NONE
    closes = [r.getMessage() for r in caplog.records if "closing connection" in r.getMessage()]
    if case.answered is None:
        assert len(closes) == 1 and case.close_reason in closes[0], closes
    else:
        assert closes == []
