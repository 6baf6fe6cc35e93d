"""Strings and tagged fields are read as Kafka's generated readers read them.

Kafka decodes a string with Java's `new String(bytes, UTF_8)`, which puts U+FFFD in place
of each malformed sequence instead of failing, and reads the tagged fields of a section in
whatever order they come (a repeated known tag: the last one wins). The expected strings
below are what OpenJDK 17's `new String(bytes, StandardCharsets.UTF_8)` returns for these
bytes; both parse paths (generated code and construct) must give them.
"""

from __future__ import annotations

import struct

import pytest

from kafka_shim.protocol import types as t
from kafka_shim.protocol.messages import APIS

HEARTBEAT = APIS[12].request
FETCH = APIS[1].request


def compact_string(text: bytes) -> bytes:
    return bytes([len(text) + 1]) + text


def heartbeat_v4(group_id: bytes) -> bytes:
    return compact_string(group_id) + struct.pack(">i", 1) + compact_string(b"m") + b"\x00\x00"


def heartbeat_v0(group_id: bytes) -> bytes:
    return struct.pack(">h", len(group_id)) + group_id + struct.pack(">i", 1) + struct.pack(">h", 1) + b"m"


JAVA_DECODED = [
    (b"\xff\xfe", "\ufffd\ufffd"),
    (b"\xc0\xaf", "\ufffd\ufffd"),  # an overlong encoding
    (b"\xe2\x82", "\ufffd"),  # a truncated sequence
    (b"\xf0\x9f\x98A", "\ufffdA"),
    (b"\xf4\x90\x80\x80", "\ufffd" * 4),  # past U+10FFFF
    (b"\xe0\x80\xaf", "\ufffd" * 3),
    (b"a\xf8\x88\x80\x80\x80b", "a" + "\ufffd" * 5 + "b"),
    # Surrogates encoded in three bytes: where Java and Python's own "replace" differ.
    (b"\xed\xa0\x80", "\ufffd"),
    (b"\xed\xbf\xbfA", "\ufffdA"),
    (b"\xed\xa0A", "\ufffdA"),
    (b"\xed\xa0", "\ufffd"),
    (b"a\xed\xa0\x80\xed\xa0\x80b", "a\ufffd\ufffdb"),
    (b"\xed\x9f\xbf", "\ud7ff"),  # the last code point before the surrogates is valid
    (b"\xf0\x90\x80\x80", "\U00010000"),
    (b"\xe1\xed\xbf", "\ufffd\ufffd"),
]


@pytest.mark.parametrize(("data", "expected"), JAVA_DECODED, ids=[d.hex() for d, _ in JAVA_DECODED])
def test_invalid_utf8_is_replaced_as_java_replaces_it(data: bytes, expected: str) -> None:
    for version, body in ((0, heartbeat_v0(data)), (4, heartbeat_v4(data))):
        assert HEARTBEAT.parse(body, version).group_id == expected
        assert t.parse_exact(HEARTBEAT.struct(version), body, "Heartbeat").group_id == expected


def fetch_v12(tags: bytes) -> bytes:
    body = struct.pack(">iiiibii", -1, 500, 1, 1024, 0, 0, -1)
    return body + b"\x01\x01" + compact_string(b"") + tags  # no topics, none forgotten, rack ""


def tagged(tag: int, data: bytes) -> bytes:
    return bytes([tag, len(data)]) + data


@pytest.mark.parametrize(
    ("tags", "cluster_id"),
    [
        (b"\x02" + tagged(7, b"x") + tagged(0, compact_string(b"c1")), "c1"),  # unknown 7 before 0
        (b"\x02" + tagged(0, compact_string(b"c1")) + tagged(0, compact_string(b"c2")), "c2"),
    ],
    ids=["descending", "repeated-last-wins"],
)
def test_tagged_fields_are_read_in_any_order(tags: bytes, cluster_id: str) -> None:
    assert FETCH.parse(fetch_v12(tags), 12).cluster_id == cluster_id
    assert t.parse_exact(FETCH.struct(12), fetch_v12(tags), "Fetch").cluster_id == cluster_id
