"""Structure-aware request frames for fuzzing, generated from the message declarations.

`FrameGenerator` walks an API's declaration for one version and writes the frame
field by field, so a mutation can land on the structure itself: a length that lies
up or down, a negative length, a huge array count, a string that is not UTF-8,
unknown tagged fields, a varint longer than the protocol allows. Other mutations
work on the finished bytes (bit flips, truncation) or on the frame's own length
prefix. The project's encoder refuses to write any of these, which is why the
fuzzer writes frames itself; values come from `random`, because a million frames
must be cheap to make.
"""

from __future__ import annotations

import random
import struct
import uuid
from dataclasses import dataclass, field

from kafka_shim.protocol import schema as s
from kafka_shim.protocol.headers import parse_request_header, peek_api
from kafka_shim.protocol.record_codec import Record, encode_batch
from kafka_shim.protocol.types import encode_uvarint
from kafka_shim.shim.handlers import ADVERTISED_APIS

MUTATIONS = (
    "valid",
    "bit_flip",
    "truncate",
    "length_up",
    "length_down",
    "huge_array",
    "negative_length",
    "invalid_utf8",
    "unknown_tags",
    "varint_overflow",
    "frame_length_up",
    "frame_length_down",
)
_FIXED = {
    "int8": struct.Struct(">b"),
    "int16": struct.Struct(">h"),
    "uint16": struct.Struct(">H"),
    "int32": struct.Struct(">i"),
    "int64": struct.Struct(">q"),
    "float64": struct.Struct(">d"),
}
_EDGES = {
    name: (-(2 ** (bits - 1)), 2 ** (bits - 1) - 1)
    for name, bits in (("int8", 8), ("int16", 16), ("int32", 32), ("int64", 64))
}
_EDGES["uint16"] = (0, 2**16 - 1)
# Few names, so frames collide on topics and groups and reach the "already exists" paths,
# and the broker's state stays bounded however long the campaign runs.
_NAMES = ("", "a", "t", "g", "topic-1", "fuzz", "__consumer_offsets", "x" * 300)


# Strings of random code points (odd characters, multi-byte UTF-8) come from this fixed pool,
# the same for every generator: made afresh for each frame, they named a new group,
# transactional id, user or client with every valid frame, state the broker keeps as Kafka
# does (a transactional id for 7 days), so that the campaign's RSS measured the names it had
# invented rather than the broker.
def _odd_names(count: int) -> tuple[str, ...]:
    rng = random.Random(0)
    lengths = [rng.randrange(12) for _ in range(count)]
    return tuple("".join(chr(rng.randrange(32, 0x2FF)) for _ in range(length)) for length in lengths)


_ODD_NAMES = _odd_names(48)
_BAD_UTF8 = (b"\xff", b"\xc0\x80", b"\xed\xa0\x80", b"abc\xfe", b"\xf4\x90\x80\x80")
_HUGE_COUNTS = (2**31 - 1, 2**30, 10**9, 1 << 20, 65536)


def api_versions() -> list[tuple[int, int]]:
    return sorted(
        (key, version)
        for key, api in ADVERTISED_APIS.items()
        for version in range(api.versions.low, api.versions.high + 1)
    )


@dataclass
class _Writer:
    """One frame being written; `mutation` is applied at one site of its kind."""

    rng: random.Random
    mutation: str
    out: bytearray = field(default_factory=bytearray)
    applied: bool = False

    def site(self, kind: str) -> bool:
        """Whether to mutate this site: the first eligible one with probability 1/3,
        then the next, so that most frames carry their mutation somewhere."""
        if self.applied or self.mutation != kind or self.rng.random() > 0.34:
            return False
        self.applied = True
        return True


class FrameGenerator:
    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.pairs = api_versions()
        self._batches = [
            encode_batch([Record(i, 1_000 + i, None, b"v" * n) for i in range(count)])
            for count, n in ((1, 10), (3, 100), (1, 0))
        ]

    def frame(self) -> tuple[int, int, str, bytes]:
        """(api key, version, mutation, frame with its length prefix)."""
        key, version = self.rng.choice(self.pairs)
        mutation = self.rng.choice(MUTATIONS)
        api = ADVERTISED_APIS[key]
        flexible = api.is_flexible(version)
        writer = _Writer(self.rng, mutation)
        writer.out += struct.pack(">hhi", key, version, self.rng.randrange(2**31))
        self._sized(writer, "string", text=True, compact=False, nullable=True)
        if flexible:
            self._tags(writer, [], version)
        self._fields(writer, api.request.fields, version, flexible)
        payload = bytes(writer.out)
        if mutation == "bit_flip":
            flipped = bytearray(payload)
            for _ in range(self.rng.randint(1, 8)):
                bit = self.rng.randrange(len(flipped) * 8)
                flipped[bit // 8] ^= 1 << (bit % 8)
            payload = bytes(flipped)
        elif mutation == "truncate":
            payload = payload[: self.rng.randrange(len(payload))]
        announced = len(payload)
        if mutation == "frame_length_up":
            announced += self.rng.choice((1, 7, 1000))
        elif mutation == "frame_length_down":
            announced = self.rng.randrange(announced)
        return key, version, mutation, struct.pack(">i", announced) + payload

    # --- values ---------------------------------------------------------------------------

    def _int(self, name: str) -> int:
        low, high = _EDGES[name]
        if self.rng.random() < 0.5:
            return self.rng.choice([v for v in (low, high, -1, 0, 1, 2, 3) if low <= v <= high])
        return self.rng.randint(low, high)

    def _primitive(self, name: str) -> bytes:
        if name in _EDGES:
            return _FIXED[name].pack(self._int(name))
        if name == "float64":
            return _FIXED[name].pack(self.rng.uniform(-1e9, 1e9))
        if name == "bool":
            return bytes([self.rng.randrange(2)])
        if name == "uuid":
            return uuid.UUID(int=0).bytes if self.rng.random() < 0.5 else self.rng.randbytes(16)
        raise AssertionError(f"no value for {name}")

    def _content(self, kind: str) -> bytes | None:
        if kind == "string":
            return self.rng.choice(_NAMES if self.rng.random() < 0.8 else _ODD_NAMES).encode()
        if kind == "records" and self.rng.random() < 0.7:
            return self.rng.choice(self._batches)
        return self.rng.randbytes(self.rng.randrange(40))

    # --- structure ------------------------------------------------------------------------

    def _length(self, writer: _Writer, length: int, compact: bool, wide: bool) -> None:
        if length >= 0 and writer.site("length_up"):
            length += self.rng.choice((1, 2, 100, 2**15 - 1))
        elif length > 0 and writer.site("length_down"):
            length -= self.rng.randint(1, length)
        elif writer.site("negative_length"):
            length = self.rng.choice((-2, -100, -(2**15)))
        if compact:
            self._uvarint(writer, max(length + 1, 0))
        else:
            limit = 2**31 - 1 if wide else 2**15 - 1
            writer.out += (_FIXED["int32"] if wide else _FIXED["int16"]).pack(min(length, limit))

    def _uvarint(self, writer: _Writer, value: int) -> None:
        if writer.site("varint_overflow"):
            # Longer than five bytes, or five bytes whose value exceeds 32 bits.
            writer.out += (
                b"\xff" * self.rng.randint(5, 10) + b"\x01"
                if self.rng.random() < 0.5
                else b"\xff" * 4 + b"\x7f"
            )
            return
        writer.out += encode_uvarint(value)

    def _sized(self, writer: _Writer, kind: str, *, text: bool, compact: bool, nullable: bool) -> None:
        content = None if nullable and self.rng.random() < 0.1 else self._content(kind)
        if text and content is not None and writer.site("invalid_utf8"):
            content = self.rng.choice(_BAD_UTF8)
        if content is None:
            if compact:
                self._uvarint(writer, 0)
            else:
                writer.out += (_FIXED["int16"] if text else _FIXED["int32"]).pack(-1)
            return
        self._length(writer, len(content), compact, wide=not text)
        writer.out += content

    def _value(
        self, writer: _Writer, field_type: s.FieldType, version: int, flexible: bool, nullable: bool
    ) -> None:
        if isinstance(field_type, s.Primitive):
            writer.out += self._primitive(field_type.name)
        elif isinstance(field_type, s.SizedType):
            text = field_type.name == "string"
            self._sized(writer, field_type.name, text=text, compact=flexible, nullable=nullable)
        elif isinstance(field_type, s.Array):
            self._array(writer, field_type, version, flexible, nullable)
        elif isinstance(field_type, s.Struct):
            # A nullable struct (DescribeTopicPartitions' cursor) starts with an int8 marker.
            if nullable:
                present = self.rng.random() >= 0.1
                writer.out += _FIXED["int8"].pack(1 if present else -1)
                if not present:
                    return
            self._fields(writer, field_type.fields, version, flexible)
        else:
            raise AssertionError(f"no encoding for {field_type!r}")

    def _array(self, writer: _Writer, array: s.Array, version: int, flexible: bool, nullable: bool) -> None:
        if nullable and self.rng.random() < 0.1:
            writer.out += b"\x00" if flexible else _FIXED["int32"].pack(-1)
            return
        count = self.rng.choice((0, 1, 1, 2, 3))
        if writer.site("huge_array"):
            declared = self.rng.choice(_HUGE_COUNTS)
            self._length(writer, declared, flexible, wide=True)
        else:
            self._length(writer, count, flexible, wide=True)
        for _ in range(count):
            self._value(writer, array.element, version, flexible, False)

    def _fields(self, writer: _Writer, fields: list[s.Field], version: int, flexible: bool) -> None:
        tagged: list[s.Field] = []
        for f in fields:
            if version not in f.versions:
                continue
            if f.tag is not None and flexible and version in f.tagged:
                tagged.append(f)
                continue
            self._value(writer, f.type, version, flexible and version in f.flexible, version in f.nullable)
        if flexible:
            self._tags(writer, tagged, version)

    def _tags(self, writer: _Writer, known: list[s.Field], version: int) -> None:
        present: list[tuple[int, bytes]] = []
        for f in known:
            if self.rng.random() < 0.3:
                inner = _Writer(self.rng, "valid")
                self._value(inner, f.type, version, True, version in f.nullable)
                present.append((f.tag or 0, bytes(inner.out)))
        if writer.site("unknown_tags"):
            taken = {tag for tag, _ in present}
            for _ in range(self.rng.randint(1, 4)):
                tag = self.rng.choice((7, 99, 1000, 2**20, 2**31 - 1))
                if tag not in taken:
                    taken.add(tag)
                    present.append((tag, self.rng.randbytes(self.rng.randrange(8))))
            if self.rng.random() < 0.8:  # Kafka's writers emit tags in order; readers need not care
                present.sort()
        self._uvarint(writer, len(present))
        for tag, data in present:
            self._uvarint(writer, tag)
            self._uvarint(writer, len(data))
            writer.out += data


def decode_request(frame: bytes) -> None:
    """Decode a request frame (without its length prefix) as the broker does: its header, then
    its body for an advertised API and version (others the broker refuses before decoding).
    Raises ProtocolError for what does not parse, and nothing else is allowed to escape."""
    key, version, _ = peek_api(frame)
    api = ADVERTISED_APIS.get(key)
    if api is None or version not in api.versions:
        return
    _, body_starts = parse_request_header(frame, api.is_flexible(version))
    api.request.parse_at(frame, body_starts, version)
