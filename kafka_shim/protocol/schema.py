"""Message schemas declared once, with per-field version ranges.

A declaration mirrors Kafka's message JSON: each `Field` names the versions it
exists in ("3+", "0-2"), the versions it may be null in, and optionally a tag
(tagged fields exist only in flexible versions). `Message.struct(version)`
derives the construct for one version on first use and caches it.

Parsing yields a `Parsed` (a dict whose keys read as attributes too) holding
*every* declared field: fields absent in the parsed version hold their
defaults, so handlers read fields without checking versions. Building takes
any mapping and fills defaults likewise.

`Message.parse`, `parse_at` and `build` run a codec that protocol.codegen
compiles from that construct on first use: the same schema, without the cost
of interpreting it field by field.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from enum import Enum
from typing import TYPE_CHECKING, Any

from construct import Construct

from kafka_shim.protocol import types as t
from kafka_shim.protocol.structs import FieldsConstruct, NullableStructConstruct, Parsed
from kafka_shim.protocol.types import ProtocolError

if TYPE_CHECKING:
    from kafka_shim.protocol.codegen import Codec

_MISSING: Any = object()


@dataclass(frozen=True)
class VersionRange:
    low: int
    high: int  # inclusive; a large number stands for "and later"

    @classmethod
    def parse(cls, text: str) -> VersionRange:
        """Kafka's notation: "3+", "0-2", "5", or "none"."""
        text = text.strip()
        if text == "none":
            return cls(1, 0)
        if text.endswith("+"):
            return cls(int(text[:-1]), 1 << 15)
        if "-" in text:
            low, high = text.split("-")
            return cls(int(low), int(high))
        return cls(int(text), int(text))

    def __contains__(self, version: object) -> bool:
        return isinstance(version, int) and self.low <= version <= self.high

    def text(self) -> str:
        """Kafka's notation of a range that is not empty, as `parse` reads it: "3+", "0-2", "5"."""
        if self.high >= ALL.high:
            return f"{self.low}+"
        return str(self.low) if self.low == self.high else f"{self.low}-{self.high}"


ALL = VersionRange(0, 1 << 15)
NONE = VersionRange(1, 0)


def _range(value: str | VersionRange) -> VersionRange:
    return value if isinstance(value, VersionRange) else VersionRange.parse(value)


class FieldType:
    """A wire type; `construct` picks its shape for one version."""

    default: Any = None

    def construct(self, version: int, flexible: bool, nullable: bool) -> Construct:
        raise NotImplementedError


class Primitive(FieldType):
    def __init__(self, name: str, con: Construct, default: Any) -> None:
        self.name = name
        self._con = con
        self.default = default

    def construct(self, version: int, flexible: bool, nullable: bool) -> Construct:
        return self._con

    def __repr__(self) -> str:
        return self.name


class SizedType(FieldType):
    def __init__(self, name: str, *, text: bool, default: Any) -> None:
        self.name = name
        self._text = text
        self.default = default
        self._cache: dict[tuple[bool, bool], Construct] = {}

    def construct(self, version: int, flexible: bool, nullable: bool) -> Construct:
        key = (flexible, nullable)
        if key not in self._cache:
            self._cache[key] = t.Sized(
                text=self._text, compact=flexible, nullable=nullable, wide=not self._text
            )
        return self._cache[key]

    def __repr__(self) -> str:
        return self.name


INT8 = Primitive("int8", t.INT8, 0)
INT16 = Primitive("int16", t.INT16, 0)
UINT16 = Primitive("uint16", t.UINT16, 0)
INT32 = Primitive("int32", t.INT32, 0)
INT64 = Primitive("int64", t.INT64, 0)
FLOAT64 = Primitive("float64", t.FLOAT64, 0.0)
BOOL = Primitive("bool", t.BOOL, False)
UUID = Primitive("uuid", t.UUID, None)
STRING = SizedType("string", text=True, default="")
BYTES = SizedType("bytes", text=False, default=b"")
# Record batches travel as opaque bytes: the broker never re-encodes them.
RECORDS = SizedType("records", text=False, default=None)


class Array(FieldType):
    """An array of a primitive type, or of a struct given as fields."""

    def __init__(self, *items: FieldType | Field) -> None:
        if len(items) == 1 and isinstance(items[0], FieldType):
            self.element: FieldType | Struct = items[0]
        else:
            if not all(isinstance(i, Field) for i in items):
                raise TypeError("Array takes one FieldType or a list of Fields")
            self.element = Struct([i for i in items if isinstance(i, Field)])
        self.default: Any = []

    def construct(self, version: int, flexible: bool, nullable: bool) -> Construct:
        return t.ArrayConstruct(
            self.element.construct(version, flexible, False), compact=flexible, nullable=nullable
        )


class Sensitive(Enum):
    """Whether a field's value may be recorded (protocol.redaction hides it where not). Kafka's
    JSON specs have no such mark: its request logger hides password config values
    (RequestChannel.loggableValue) and never sees SASL tokens (authentication happens before
    requests are logged); here every recorder sees every request, so credentials are marked."""

    NO = 0
    CREDENTIAL = 1  # always hidden: SASL tokens, SCRAM salts and salted passwords
    # A config's value, hidden when its key is sensitive (protocol.settings.config_value_hidden):
    # the key is the entry's `name`, the resource the enclosing `resource_type` (a topic where
    # there is none, as in CreateTopics).
    CONFIG_VALUE = 2


class Names(Enum):
    """What a field's value names, for the code that asks what a request is about (fault rules'
    and recordings' matches, protocol.named): declared on the field, so that no reader guesses
    from field names. Kafka's JSON specs say so in `entityType` (topicName, groupId,
    transactionalId); partitions are named here too, so that a rule can name one."""

    NOTHING = 0
    TOPIC = 1  # a topic's name, or its id (a uuid field)
    GROUP = 2
    TRANSACTIONAL_ID = 3
    # A partition index: of the topic named by the nearest enclosing struct that names one.
    PARTITION = 4
    # FindCoordinator's keys: groups or transactional ids, as the request's key_type says.
    COORDINATOR_KEY = 5
    # A config resource's name: a topic or a group as its struct's resource_type says
    # (Kafka's ConfigResource.Type); a broker or logger names none of these.
    CONFIG_RESOURCE = 6


@dataclass(frozen=True)
class Field:
    name: str
    type: FieldType
    versions: VersionRange = ALL
    nullable: VersionRange = NONE
    tag: int | None = None
    tagged: VersionRange = NONE
    default: Any = _MISSING
    # Some header fields keep the classic encoding even in flexible versions.
    flexible: VersionRange = ALL
    sensitive: Sensitive = Sensitive.NO
    names: Names = Names.NOTHING

    def __init__(
        self,
        name: str,
        type: FieldType,
        versions: str | VersionRange = ALL,
        *,
        nullable: str | VersionRange = NONE,
        tag: int | None = None,
        tagged: str | VersionRange | None = None,
        default: Any = _MISSING,
        flexible: str | VersionRange = ALL,
        sensitive: Sensitive = Sensitive.NO,
        names: Names = Names.NOTHING,
    ) -> None:
        set_ = object.__setattr__
        set_(self, "name", name)
        set_(self, "type", type)
        set_(self, "versions", _range(versions))
        set_(self, "nullable", _range(nullable))
        set_(self, "tag", tag)
        if tag is not None and tagged is None:
            tagged = versions
        set_(self, "tagged", _range(tagged) if tagged is not None else NONE)
        set_(self, "default", default)
        set_(self, "flexible", _range(flexible))
        set_(self, "sensitive", sensitive)
        set_(self, "names", names)

    def default_value(self) -> Any:
        value = self.type.default if self.default is _MISSING else self.default
        return list(value) if isinstance(value, list) else value

    def inner_fields(self) -> list[Field]:
        """The fields of the struct this field holds, itself or as its array's elements (none
        for any other type): what a walk of a request's fields goes on into."""
        kind = self.type.element if isinstance(self.type, Array) else self.type
        return kind.fields if isinstance(kind, Struct) else []


class Struct(FieldType):
    """A struct field (Kafka's `"type": "Assignment"` with its own fields). Nullable ones are
    preceded by an int8, -1 for null and 1 for present, as Kafka writes them."""

    def __init__(self, fields: Iterable[Field]) -> None:
        self.fields = list(fields)
        self.default = None
        self._cache: dict[tuple[int, bool, bool], Construct] = {}

    def construct(self, version: int, flexible: bool, nullable: bool) -> Construct:
        key = (version, flexible, nullable)
        if key not in self._cache:
            con = fields_construct(self.fields, version, flexible)
            self._cache[key] = NullableStructConstruct(con) if nullable else con
        return self._cache[key]


def fields_construct(fields: list[Field], version: int, flexible: bool) -> FieldsConstruct:
    """The construct of a struct's `fields` at one version: which fields the version has, in
    order, which are tagged (only in flexible versions), and the defaults of the rest."""
    regular: list[tuple[str, Construct]] = []
    tagged: dict[int, tuple[str, Construct, Any]] = {}
    absent: list[tuple[str, Callable[[], Any]]] = []
    for f in fields:
        if version not in f.versions:
            absent.append((f.name, f.default_value))
            continue
        con = f.type.construct(version, flexible and version in f.flexible, version in f.nullable)
        if f.tag is not None and version in f.tagged and flexible:
            tagged[f.tag] = (f.name, con, f.default_value())
            absent.append((f.name, f.default_value))
        else:
            regular.append((f.name, con))
    return FieldsConstruct(flexible, regular, tagged, absent, {f.name: f.default_value() for f in fields})


class Message:
    """One request or response body, across all its versions."""

    def __init__(self, name: str, *, versions: str, flexible: str, fields: list[Field]) -> None:
        self.name = name
        self.versions = VersionRange.parse(versions)
        self.flexible = VersionRange.parse(flexible)
        self.fields = fields
        self._structs: dict[int, Construct] = {}
        self._codecs: dict[int, Codec] = {}

    def struct(self, version: int) -> Construct:
        con = self._structs.get(version)
        if con is None:
            if version not in self.versions:
                raise ProtocolError(f"{self.name} has no version {version}")
            con = fields_construct(self.fields, version, version in self.flexible)
            self._structs[version] = con
        return con

    def codec(self, version: int) -> Codec:
        """The parse/build code compiled from `struct(version)`, on first use."""
        codec = self._codecs.get(version)
        if codec is None:
            from kafka_shim.protocol import codegen  # imported with the first codec compiled

            codec = codegen.derive(self.struct(version), f"{self.name}v{version}")
            self._codecs[version] = codec
        return codec

    def parse(self, data: bytes | memoryview, version: int) -> Parsed:
        if not isinstance(data, bytes):
            data = bytes(data)
        return self.codec(version).parse(data, 0)[0]

    def parse_at(self, data: bytes, pos: int, version: int) -> tuple[Parsed, int]:
        """Parse the body starting at `pos` of `data` (a whole frame, say); the value and
        where the body ends."""
        return self.codec(version).parse(data, pos)

    def build(self, obj: Mapping[str, Any], version: int) -> bytes:
        built = self.codec(version).build(obj)
        return built if isinstance(built, bytes) else bytes(built)

    def __repr__(self) -> str:
        return f"Message({self.name})"
