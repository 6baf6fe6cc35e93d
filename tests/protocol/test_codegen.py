"""The generated codec (protocol.codegen) against the construct structs it is derived from.

For every message and version: the same bytes built from the same mapping,
the same value parsed from them (same types, same key order), the same end
position from parse_at, and, for hostile bytes (truncations, bit flips,
huge lengths and counts, long varints, bad UTF-8, nulls, tag disorder), the
same decision: the same value, or a ProtocolError from both.
"""

from __future__ import annotations

import io
import struct
import uuid
from collections.abc import Callable
from typing import Any

import pytest
from construct import Int24ub
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kafka_shim.protocol import types as t
from kafka_shim.protocol.headers import RequestHeader, ResponseHeader
from kafka_shim.protocol.messages import APIS
from kafka_shim.protocol.schema import INT32, STRING, Array, Field, Message, Parsed, Primitive
from kafka_shim.protocol.types import ProtocolError
from tests.strategies import message_values

MESSAGES = [RequestHeader, ResponseHeader] + [
    message for api in APIS.values() for message in (api.request, api.response)
]
MESSAGE_VERSIONS = [
    pytest.param(message, version, id=f"{message.name}v{version}")
    for message in MESSAGES
    for version in range(message.versions.low, message.versions.high + 1)
]

EXAMPLES = settings(
    max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large]
)


def snapshot(value: Any) -> Any:
    """A strict comparable form: types, key order and nesting all count."""
    if isinstance(value, dict):
        return (type(value).__name__, tuple((k, snapshot(v)) for k, v in dict.items(value)))
    if isinstance(value, list):
        return ("list", tuple(snapshot(v) for v in value))
    if isinstance(value, float):  # by its bits: a NaN parsed from the same bytes is the same
        return ("float", struct.pack(">d", value))
    return (type(value).__name__, value)


def construct_parse(message: Message, data: bytes, version: int) -> Any:
    return t.parse_exact(message.struct(version), data, message.name)


def construct_build(message: Message, value: Any, version: int) -> bytes:
    return t.build_bytes(message.struct(version), value, message.name)


def outcome(parse: Callable[[bytes], Any], data: bytes) -> Any:
    """The parsed value, or "rejected"; any exception but ProtocolError fails the test."""
    try:
        return snapshot(parse(data))
    except ProtocolError:
        return "rejected"


def assert_same_decision(message: Message, version: int, data: bytes) -> Any:
    derived = outcome(lambda d: message.parse(d, version), data)
    reference = outcome(lambda d: construct_parse(message, d, version), data)
    assert derived == reference
    return derived


def stream_outcome(parse: Callable[[io.BytesIO], Any], frame: bytes, start: int) -> Any:
    stream = io.BytesIO(frame)
    stream.seek(start)
    try:
        value = parse(stream)
    except ProtocolError:
        return "rejected"
    return snapshot(value), stream.tell()


def parse_at_outcome(message: Message, version: int, frame: bytes, start: int) -> Any:
    try:
        value, end = message.parse_at(frame, start, version)
    except ProtocolError:
        return "rejected"
    return snapshot(value), end


def construct_parse_stream(message: Message, stream: io.BytesIO, version: int) -> Any:
    try:
        return message.struct(version)._parse(stream, None, message.name)
    except ProtocolError:
        raise
    except Exception as exc:  # construct raises many kinds on short input
        raise ProtocolError(str(exc)) from exc


def assert_same_stream_decision(message: Message, version: int, frame: bytes, start: int) -> None:
    reference = stream_outcome(lambda s: construct_parse_stream(message, s, version), frame, start)
    derived = parse_at_outcome(message, version, frame, start)
    assert derived == reference


@pytest.mark.parametrize(("message", "version"), MESSAGE_VERSIONS)
@EXAMPLES
@given(data=st.data())
def test_same_bytes_and_values(message: Message, version: int, data: st.DataObject) -> None:
    value = data.draw(message_values(message, version, partial=data.draw(st.booleans())))
    built = message.build(value, version)
    assert built == construct_build(message, value, version)
    parsed = message.parse(built, version)
    assert snapshot(parsed) == snapshot(construct_parse(message, built, version))
    assert message.build(parsed, version) == built
    # As the server calls it: after a header, with whatever follows left unread.
    header, trailing = data.draw(st.binary(max_size=8)), data.draw(st.binary(max_size=8))
    value, end = message.parse_at(header + built + trailing, len(header), version)
    assert snapshot(value) == snapshot(parsed)
    assert end == len(header) + len(built)


# Byte patterns that, written over any offset, make a length, count, varint or
# string hostile: -1 (null), the largest int16/int32, a varint too long or too
# large, a compact null, invalid UTF-8.
HOSTILE_PATTERNS = [
    b"\xff\xff",
    b"\xff\xff\xff\xff",
    b"\x7f\xff",
    b"\x7f\xff\xff\xff",
    b"\x80\x80\x80\x80\x80\x01",
    b"\xff\xff\xff\xff\x0f",
    b"\x00",
    b"\xc3\x28",
    b"\xed\xa0\x80",
    b"\x02\xff",
]


@st.composite
def mutated(draw: st.DrawFn, valid: bytes) -> bytes:
    data = bytearray(valid)
    for _ in range(draw(st.integers(1, 3))):
        kind = draw(st.sampled_from(["truncate", "flip", "overwrite", "insert"]))
        at = draw(st.integers(0, len(data)))
        if kind == "truncate":
            del data[at:]
        elif kind == "flip" and at < len(data):
            data[at] ^= 1 << draw(st.integers(0, 7))
        elif kind == "overwrite":
            pattern = draw(st.sampled_from(HOSTILE_PATTERNS))
            data[at : at + len(pattern)] = pattern
        elif kind == "insert":
            data[at:at] = draw(st.sampled_from(HOSTILE_PATTERNS))
    return bytes(data)


@pytest.mark.parametrize(("message", "version"), MESSAGE_VERSIONS)
@EXAMPLES
@given(data=st.data())
def test_same_decision_on_hostile_bytes(message: Message, version: int, data: st.DataObject) -> None:
    valid = construct_build(message, data.draw(message_values(message, version)), version)
    hostile = data.draw(mutated(valid))
    assert_same_decision(message, version, hostile)
    assert_same_stream_decision(message, version, b"\x00\x01" + hostile, 2)
    for end in range(len(valid)):  # every truncation of the valid frame
        assert_same_decision(message, version, valid[:end])


def uvarint(value: int) -> bytes:
    return t.encode_uvarint(value)


def compact_string(text: bytes) -> bytes:
    return uvarint(len(text) + 1) + text


HEARTBEAT = APIS[12].request
FETCH = APIS[1].request
OFFSET_COMMIT = APIS[8].request
METADATA = APIS[3].request


def heartbeat_v4(group_id: bytes, tags: bytes = b"\x00") -> bytes:
    return compact_string(group_id) + struct.pack(">i", 1) + compact_string(b"m") + b"\x00" + tags


@pytest.mark.parametrize(
    ("message", "version", "data"),
    [
        pytest.param(HEARTBEAT, 0, b"\x00\x01\xff" + b"\x00\x00\x00\x01\x00\x00", id="bad-utf8-classic"),
        pytest.param(HEARTBEAT, 4, heartbeat_v4(b"\xc3\x28"), id="bad-utf8-compact"),
        pytest.param(HEARTBEAT, 4, heartbeat_v4(b"\xed\xa0\x80"), id="utf8-surrogate"),
        pytest.param(HEARTBEAT, 0, b"\xff\xff" + b"\x00\x00\x00\x01\x00\x00", id="null-classic"),
        pytest.param(HEARTBEAT, 4, b"\x00" + heartbeat_v4(b"")[1:], id="null-compact"),
        pytest.param(HEARTBEAT, 0, b"\xff\xfe" + b"\x00\x00\x00\x01\x00\x00", id="negative-length"),
        pytest.param(HEARTBEAT, 0, b"\x7f\xff" + b"\x00" * 10, id="huge-string-length"),
        pytest.param(HEARTBEAT, 4, b"\xff\xff\xff\xff\x0f" + heartbeat_v4(b"")[1:], id="huge-compact-length"),
        pytest.param(
            HEARTBEAT, 4, b"\x80\x80\x80\x80\x80\x01" + heartbeat_v4(b"")[1:], id="varint-over-5-bytes"
        ),
        pytest.param(
            OFFSET_COMMIT,
            2,
            b"\x00\x01g" + b"\x00" * 4 + b"\x00\x01m" + b"\x00" * 8 + b"\x7f\xff\xff\xff",
            id="huge-array-count",
        ),
        pytest.param(
            OFFSET_COMMIT,
            8,
            compact_string(b"g") + b"\x00" * 4 + compact_string(b"m") + b"\x00" + b"\xff\xff\xff\xff\x0f",
            id="huge-compact-array-count",
        ),
        pytest.param(METADATA, 0, b"\xff\xff\xff\xff", id="null-array-not-nullable-in-v0"),
        pytest.param(METADATA, 1, b"\xff\xff\xff\xff", id="null-array-nullable-from-v1"),
        pytest.param(METADATA, 4, b"\x00\x00\x00\x00\x02", id="bool-nonzero-is-true"),
        pytest.param(HEARTBEAT, 4, heartbeat_v4(b"g", b"\x02\x05\x00\x03\x00"), id="tags-out-of-order"),
        pytest.param(HEARTBEAT, 4, heartbeat_v4(b"g", b"\x02\x03\x00\x03\x00"), id="tags-repeated"),
        pytest.param(HEARTBEAT, 4, heartbeat_v4(b"g", b"\x02\x03\x00\x05\x00"), id="tags-ascending"),
        pytest.param(HEARTBEAT, 4, heartbeat_v4(b"g", b"\x01\x07\x03abc"), id="unknown-tag-skipped"),
        pytest.param(HEARTBEAT, 4, heartbeat_v4(b"g", b"\x01\x07\x09abc"), id="tag-size-exceeds-frame"),
        pytest.param(HEARTBEAT, 4, heartbeat_v4(b"g", b"\x7f"), id="tag-count-exceeds-frame"),
        pytest.param(HEARTBEAT, 4, heartbeat_v4(b"g", b""), id="missing-tag-section"),
    ],
)
def test_same_decision_on_crafted_bytes(message: Message, version: int, data: bytes) -> None:
    assert_same_decision(message, version, data)
    assert_same_stream_decision(message, version, b"\xab" + data + b"\xcd", 1)


def fetch_v12(tags: bytes) -> bytes:
    body = struct.pack(">iiiibii", -1, 500, 1, 1024, 0, 0, -1)
    return body + b"\x01\x01" + compact_string(b"") + tags  # no topics, none forgotten, rack ""


@pytest.mark.parametrize(
    ("tags", "cluster_id"),
    [
        pytest.param(b"\x01\x00\x02" + compact_string(b"c"), "c", id="tagged-string"),
        pytest.param(b"\x01\x00\x03" + compact_string(b"c") + b"z", "c", id="tag-with-trailing-bytes"),
        pytest.param(b"\x01\x00\x01\x00", None, id="tagged-null"),
        # The string claims more than its tag holds, though the frame has more after it.
        pytest.param(b"\x01\x00\x02\x05c" + b"\x00" * 8, "rejected", id="tag-content-bounded-by-tag"),
    ],
)
def test_tagged_field_is_parsed_within_its_own_bytes(tags: bytes, cluster_id: str | None) -> None:
    data = fetch_v12(tags)
    decision = assert_same_decision(FETCH, 12, data)
    if cluster_id == "rejected":
        assert decision == "rejected"
    else:
        assert FETCH.parse(data, 12).cluster_id == cluster_id


@pytest.mark.parametrize(
    ("message", "version", "value"),
    [
        pytest.param(HEARTBEAT, 0, {"group_id": None}, id="null-string"),
        pytest.param(HEARTBEAT, 4, {"member_id": None}, id="null-compact-string"),
        pytest.param(METADATA, 0, {"topics": None}, id="null-array"),
        pytest.param(HEARTBEAT, 0, {"generation_id": "1"}, id="string-for-int"),
        pytest.param(HEARTBEAT, 0, {"generation_id": 1 << 40}, id="int-out-of-range"),
        pytest.param(HEARTBEAT, 0, {"group_id": 1}, id="int-for-string"),
    ],
)
def test_both_paths_refuse_to_build_invalid_values(message: Message, version: int, value: Any) -> None:
    with pytest.raises(Exception):  # noqa: B017 - the construct path raises several kinds
        construct_build(message, value, version)
    with pytest.raises(ProtocolError):
        message.build(value, version)


def test_parsed_values_are_dicts_whose_fields_read_as_attributes() -> None:
    data = OFFSET_COMMIT.build(
        {"group_id": "g", "topics": [{"name": "t", "partitions": [{"partition_index": 2}]}]}, 8
    )
    request = OFFSET_COMMIT.parse(data, 8)
    assert isinstance(request, Parsed)  # of its struct's parsed_class: fields as properties
    assert request.group_id == request["group_id"] == request.get("group_id") == "g"
    assert "retention_time_ms" in request and request.retention_time_ms == -1  # absent in v8
    partition = request.topics[0].partitions[0]
    assert isinstance(partition, Parsed) and partition.partition_index == 2
    assert partition == {
        "partition_index": 2,
        "committed_offset": 0,
        "committed_leader_epoch": -1,
        "commit_timestamp": -1,
        "committed_metadata": "",
    }
    assert "partition_index=2" in repr(partition)
    # Absent list defaults are fresh per parse: mutating one leaves the next alone.
    empty = APIS[1].response.build({}, 12)
    APIS[1].response.parse(empty, 12).node_endpoints.append("x")
    assert APIS[1].response.parse(empty, 12).node_endpoints == []


def test_a_field_named_like_a_dict_method_reads_as_the_field() -> None:
    """DescribeClientQuotas' entries have a `values` field; dict's own method stays reachable."""
    api = APIS[48]
    data = api.response.build(
        {"entries": [{"entity": [], "values": [{"key": "producer_byte_rate", "value": 1024.0}]}]}, 1
    )
    entry = api.response.parse(data, 1).entries[0]
    assert entry.values == entry["values"] == [{"key": "producer_byte_rate", "value": 1024.0}]
    assert list(dict.values(entry)) == [[], entry.values]
    assert entry.items() and entry.get("missing", 7) == 7
    with pytest.raises(AttributeError):
        _ = entry.no_such_field


def test_parsed_fields_are_properties_over_the_keys() -> None:
    """A generated parser's value reads its fields through its struct's properties: a field
    set afterwards reads back, and so does a key that is no field."""
    request = OFFSET_COMMIT.parse(OFFSET_COMMIT.build({"group_id": "g", "topics": []}, 8), 8)
    assert isinstance(vars(type(request))["group_id"], property)
    request["group_id"] = "h"
    assert request.group_id == request["group_id"] == "h"
    request["not_a_field"] = 7
    assert request.not_a_field == 7 and request.get("not_a_field") == 7


INT24 = Primitive("int24", Int24ub, 0)
WITHOUT_TEMPLATE = Message(
    "WithoutTemplate",
    versions="0-1",
    flexible="1+",
    fields=[Field("name", STRING), Field("value", INT24), Field("items", Array(INT32))],
)


@pytest.mark.parametrize("version", [0, 1])
def test_a_construct_without_template_falls_back_to_construct(version: int) -> None:
    value = {"name": "n", "value": 70000, "items": [1, 2]}
    data = WITHOUT_TEMPLATE.build(value, version)
    assert data == construct_build(WITHOUT_TEMPLATE, value, version)
    assert WITHOUT_TEMPLATE.parse(data, version) == value
    assert not WITHOUT_TEMPLATE.codec(version).parse.__code__.co_filename.startswith("<codec")
    assert_same_decision(WITHOUT_TEMPLATE, version, data[:-1])
    assert_same_stream_decision(WITHOUT_TEMPLATE, version, b"\x00" + data + b"\x00", 1)


def test_uuids_are_built_as_uuid_would() -> None:
    topic_id = uuid.uuid4()
    request = METADATA.parse(METADATA.build({"topics": [{"topic_id": topic_id, "name": "t"}]}, 10), 10)
    parsed = request.topics[0].topic_id
    assert parsed == topic_id and hash(parsed) == hash(topic_id) and repr(parsed) == repr(topic_id)
    assert parsed.version == topic_id.version and parsed.is_safe == uuid.SafeUUID.unknown


def test_a_struct_field_left_out_is_built_as_its_defaults_by_both_paths() -> None:
    """ShareAcknowledge's per-partition CurrentLeader is a plain (not nullable, not tagged)
    struct: left out, Kafka's generated code writes `new LeaderIdAndEpoch()`, its defaults."""
    from kafka_shim.protocol.messages.share_acknowledge import API as SHARE_ACKNOWLEDGE

    value: dict[str, Any] = {"responses": [{"partitions": [{}]}]}
    for version in range(SHARE_ACKNOWLEDGE.versions.low, SHARE_ACKNOWLEDGE.versions.high + 1):
        built = SHARE_ACKNOWLEDGE.response.build(value, version)
        assert built == construct_build(SHARE_ACKNOWLEDGE.response, value, version)
        leader = SHARE_ACKNOWLEDGE.response.parse(built, version).responses[0].partitions[0].current_leader
        assert (leader.leader_id, leader.leader_epoch) == (-1, -1)
