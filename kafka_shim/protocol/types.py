"""Kafka's primitive wire types as `construct` constructs.

Every decoder bounds what it reads by the bytes left in the stream before it
allocates or loops, so a hostile length or count fails fast with a
`ProtocolError` instead of allocating or spinning.
"""

from __future__ import annotations

import codecs
import io
import struct
import uuid
from typing import Any

from construct import Construct, StreamError, stream_read, stream_write


class ProtocolError(ValueError):
    """Bytes from a peer that do not decode as the declared schema."""


def _replace_as_java(exc: UnicodeError) -> tuple[str, int]:
    """One U+FFFD per malformed sequence, where Java's `new String(bytes, UTF_8)` puts it.

    Python's "replace" and Java agree on every malformed sequence but one: Java takes ED
    followed by A0-BF as the start of a 3-byte sequence (a UTF-16 surrogate, found invalid
    only once decoded), so ED A0 80 is one replacement for Java and three for Python.
    """
    if not isinstance(exc, UnicodeDecodeError):
        raise exc
    data, start = exc.object, exc.start
    if data[start] == 0xED and start + 1 < len(data) and 0xA0 <= data[start + 1] <= 0xBF:
        whole = start + 2 < len(data) and 0x80 <= data[start + 2] <= 0xBF
        return "\ufffd", start + (3 if whole else 2)
    return "\ufffd", exc.end


# Kafka's readers decode strings with `new String(bytes, UTF_8)`, which replaces invalid
# UTF-8 instead of failing: `bytes.decode("utf-8", JAVA_REPLACE)` does the same.
JAVA_REPLACE = "kafka_shim.java-replace"
codecs.register_error(JAVA_REPLACE, _replace_as_java)


def remaining(stream: Any) -> int:
    """Bytes left in a BytesIO stream (every frame is parsed from one)."""
    if isinstance(stream, io.BytesIO):
        return stream.getbuffer().nbytes - stream.tell()
    return 1 << 31


class Fixed(Construct):  # type: ignore[misc]
    """A fixed-size big-endian number."""

    def __init__(self, fmt: str) -> None:
        super().__init__()
        self._struct = struct.Struct(fmt)
        self._size = self._struct.size

    def _parse(self, stream: Any, context: Any, path: str) -> Any:
        return self._struct.unpack(stream_read(stream, self._size, path))[0]

    def _build(self, obj: Any, stream: Any, context: Any, path: str) -> Any:
        try:
            stream_write(stream, self._struct.pack(obj), self._size, path)
        except struct.error as exc:
            raise ProtocolError(f"{path}: {obj!r} does not fit {self._struct.format}") from exc
        return obj

    def _sizeof(self, context: Any, path: str) -> int:
        return self._size


class BoolConstruct(Construct):  # type: ignore[misc]
    def _parse(self, stream: Any, context: Any, path: str) -> bool:
        return stream_read(stream, 1, path) != b"\x00"

    def _build(self, obj: Any, stream: Any, context: Any, path: str) -> Any:
        stream_write(stream, b"\x01" if obj else b"\x00", 1, path)
        return obj


class UuidConstruct(Construct):  # type: ignore[misc]
    def _parse(self, stream: Any, context: Any, path: str) -> uuid.UUID:
        return uuid.UUID(bytes=stream_read(stream, 16, path))

    def _build(self, obj: Any, stream: Any, context: Any, path: str) -> Any:
        stream_write(stream, obj.bytes, 16, path)
        return obj


# --- varints: the one implementation (message codecs, record batches, construct) ------------


def read_uvarint_at(
    data: bytes | bytearray | memoryview, pos: int, max_bytes: int = 5, path: str = ""
) -> tuple[int, int]:
    """The unsigned varint at `pos` of `data`: (value, position after it). IndexError when
    `data` ends inside it, ProtocolError when it runs past `max_bytes` (5 for 32 bits, 10 for
    64). Most varints are one byte: that case returns first, and a loop was as fast as an
    unrolled reader for the rest."""
    byte = data[pos]
    if byte < 0x80:
        return byte, pos + 1
    result = byte & 0x7F
    shift = 7
    end = pos + max_bytes
    pos += 1
    while pos < end:
        byte = data[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if byte < 0x80:
            return result, pos
        shift += 7
    raise ProtocolError(f"{path}: varint longer than {max_bytes} bytes")


def zigzag_decode(raw: int) -> int:
    return (raw >> 1) ^ -(raw & 1)


def zigzag_encode(value: int) -> int:
    """For values of up to 64 bits, as Kafka's varints and varlongs hold."""
    return (value << 1) ^ (value >> 63)


_ONE_BYTE_UVARINTS = tuple(bytes((n,)) for n in range(0x80))


def encode_uvarint(value: int) -> bytes:
    if value < 0x80:
        if value < 0:
            raise ProtocolError(f"unsigned varint cannot hold {value}")
        return _ONE_BYTE_UVARINTS[value]
    out = bytearray()
    while value > 0x7F:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def read_uvarint(stream: Any, path: str = "", max_bytes: int = 5) -> int:
    """A varint from a construct stream: its bytes gathered, then read as any other."""
    gathered = bytearray()
    while len(gathered) < max_bytes:
        gathered += stream_read(stream, 1, path)
        if gathered[-1] < 0x80:
            break
    else:
        raise ProtocolError(f"{path}: varint longer than {max_bytes} bytes")
    return read_uvarint_at(gathered, 0, max_bytes, path)[0]


class UVarint(Construct):  # type: ignore[misc]
    def __init__(self, max_bytes: int = 5) -> None:
        super().__init__()
        self._max_bytes = max_bytes

    def _parse(self, stream: Any, context: Any, path: str) -> int:
        return read_uvarint(stream, path, self._max_bytes)

    def _build(self, obj: Any, stream: Any, context: Any, path: str) -> Any:
        data = encode_uvarint(obj)
        stream_write(stream, data, len(data), path)
        return obj


class ZigZagVarint(Construct):  # type: ignore[misc]
    """Signed varint (zig-zag), 5 bytes for int32 and 10 for int64."""

    def __init__(self, max_bytes: int) -> None:
        super().__init__()
        self._max_bytes = max_bytes

    def _parse(self, stream: Any, context: Any, path: str) -> int:
        return zigzag_decode(read_uvarint(stream, path, self._max_bytes))

    def _build(self, obj: Any, stream: Any, context: Any, path: str) -> Any:
        data = encode_uvarint(zigzag_encode(obj))
        stream_write(stream, data, len(data), path)
        return obj


_INT16 = struct.Struct(">h")
_INT32 = struct.Struct(">i")


def _read_length(stream: Any, path: str, compact: bool, wide: bool) -> int:
    """Length prefix: -1 means null; compact forms store length + 1."""
    if compact:
        return read_uvarint(stream, path) - 1
    fmt = _INT32 if wide else _INT16
    return int(fmt.unpack(stream_read(stream, fmt.size, path))[0])


def _write_length(stream: Any, length: int, path: str, compact: bool, wide: bool) -> None:
    if compact:
        data = encode_uvarint(length + 1)
    else:
        data = (_INT32 if wide else _INT16).pack(length)
    stream_write(stream, data, len(data), path)


class Sized(Construct):  # type: ignore[misc]
    """STRING, BYTES and RECORDS in all four shapes (classic/compact x nullable)."""

    def __init__(self, *, text: bool, compact: bool, nullable: bool, wide: bool) -> None:
        super().__init__()
        self._text = text
        self._compact = compact
        self._nullable = nullable
        self._wide = wide

    def _parse(self, stream: Any, context: Any, path: str) -> Any:
        length = _read_length(stream, path, self._compact, self._wide)
        if length < 0:
            if length == -1 and self._nullable:
                return None
            raise ProtocolError(f"{path}: invalid length {length}")
        if length > remaining(stream):
            raise ProtocolError(f"{path}: length {length} exceeds the frame")
        data = stream_read(stream, length, path)
        return data.decode("utf-8", JAVA_REPLACE) if self._text else data

    def _build(self, obj: Any, stream: Any, context: Any, path: str) -> Any:
        if obj is None:
            if not self._nullable:
                raise ProtocolError(f"{path}: null in a non-nullable field")
            _write_length(stream, -1, path, self._compact, self._wide)
            return obj
        data = obj.encode("utf-8") if self._text else bytes(obj)
        _write_length(stream, len(data), path, self._compact, self._wide)
        stream_write(stream, data, len(data), path)
        return obj


class ArrayConstruct(Construct):  # type: ignore[misc]
    def __init__(self, element: Construct, *, compact: bool, nullable: bool) -> None:
        super().__init__()
        self._element = element
        self._compact = compact
        self._nullable = nullable

    def _parse(self, stream: Any, context: Any, path: str) -> Any:
        count = _read_length(stream, path, self._compact, wide=True)
        if count < 0:
            if count == -1 and self._nullable:
                return None
            raise ProtocolError(f"{path}: invalid array length {count}")
        if count > remaining(stream):
            raise ProtocolError(f"{path}: array of {count} exceeds the frame")
        parse = self._element._parse
        return [parse(stream, context, path) for _ in range(count)]

    def _build(self, obj: Any, stream: Any, context: Any, path: str) -> Any:
        if obj is None:
            if not self._nullable:
                raise ProtocolError(f"{path}: null in a non-nullable array")
            _write_length(stream, -1, path, self._compact, wide=True)
            return obj
        _write_length(stream, len(obj), path, self._compact, wide=True)
        build = self._element._build
        for item in obj:
            build(item, stream, context, path)
        return obj


def parse_exact(con: Construct, data: bytes | memoryview, what: str) -> Any:
    """Parse `data` fully with `con`, mapping every failure to ProtocolError."""
    stream = io.BytesIO(data)
    try:
        value = con._parse(stream, None, what)
    except ProtocolError:
        raise
    except (StreamError, struct.error, ValueError, IndexError, KeyError, TypeError) as exc:
        raise ProtocolError(f"{what}: {exc}") from exc
    return value


def build_bytes(con: Construct, obj: Any, what: str) -> bytes:
    stream = io.BytesIO()
    con._build(obj, stream, None, what)
    return stream.getvalue()


INT8 = Fixed(">b")
INT16 = Fixed(">h")
UINT16 = Fixed(">H")
INT32 = Fixed(">i")
UINT32 = Fixed(">I")
INT64 = Fixed(">q")
FLOAT64 = Fixed(">d")
BOOL = BoolConstruct()
UUID = UuidConstruct()
UVARINT = UVarint()
VARINT = ZigZagVarint(5)
VARLONG = ZigZagVarint(10)
