"""The per-version constructs a message schema derives (protocol.schema) and protocol.codegen
compiles: a struct's fields at one version, a nullable struct, and `Parsed`, what parsing
yields. Declared apart from the schema's field declarations so that the codec compiler reads
them without importing the schema that compiles it."""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from operator import itemgetter
from types import MappingProxyType
from typing import Any

from construct import Construct, stream_read, stream_write

from kafka_shim.protocol import types as t
from kafka_shim.protocol.types import ProtocolError

_MISSING: Any = object()
_get = dict.get


class Parsed(dict[str, Any]):
    """A parsed struct: its fields by name, as keys and as attributes (`request.group_id`).

    What construct's Container offers, at a sixth of the cost of a field read, which
    handlers do a dozen times per request: Container is an OrderedDict whose attribute
    reads fail the normal lookup first and raise inside. Here the fields are looked up
    first; a name that is not one (`items`, `get`) is an ordinary attribute. So a field
    named like a dict method (DescribeClientQuotas' `values`) reads as the field, and
    the method stays reachable through `dict` (`dict.values(parsed)`)."""

    __slots__ = ()

    def __getattribute__(self, name: str) -> Any:
        value = _get(self, name, _MISSING)
        return object.__getattribute__(self, name) if value is _MISSING else value

    __setattr__ = dict.__setitem__

    def __repr__(self) -> str:
        return f"Parsed({', '.join(f'{name}={value!r}' for name, value in dict.items(self))})"


class _FieldsParsed(Parsed):
    """The base of `parsed_class`'s classes: fields read through properties, anything else
    looked up as usual, a key that is not a declared field last (as Parsed reads it)."""

    __slots__ = ()
    __getattribute__ = object.__getattribute__  # type: ignore[assignment]

    def __getattr__(self, name: str) -> Any:  # only once the ordinary lookup failed
        value = _get(self, name, _MISSING)
        if value is _MISSING:
            raise AttributeError(name)
        return value


@functools.cache
def parsed_class(names: tuple[str, ...]) -> type[Parsed]:
    """The Parsed of a struct with these fields, as protocol.codegen's parsers make it: each
    field a property reading its key in C (itemgetter), a third of the cost of
    Parsed.__getattribute__, which handlers pay a dozen times per request. A field named
    like a dict method still reads as the field (the property shadows the method)."""
    fields: dict[str, Any] = {name: property(itemgetter(name)) for name in names}
    return type("Parsed", (_FieldsParsed,), {"__slots__": (), "__module__": __name__, **fields})


class NullableStructConstruct(Construct):  # type: ignore[misc]
    """A nullable struct: an int8 presence marker (-1 null, 1 present), then the struct."""

    def __init__(self, struct: Construct) -> None:
        super().__init__()
        self._struct = struct

    def _parse(self, stream: Any, context: Any, path: str) -> Any:
        marker = t.INT8._parse(stream, context, path)
        if marker < 0:
            return None
        return self._struct._parse(stream, context, path)

    def _build(self, obj: Any, stream: Any, context: Any, path: str) -> Any:
        if obj is None:
            t.INT8._build(-1, stream, context, path)
            return obj
        t.INT8._build(1, stream, context, path)
        return self._struct._build(obj, stream, context, path)


# What a struct field left out of a value to build stands for: every field at its default.
NO_FIELDS: Mapping[str, Any] = MappingProxyType({})


class FieldsConstruct(Construct):  # type: ignore[misc]
    """One struct at one version (schema.fields_construct decides which fields it has):
    regular fields in order, then tagged fields."""

    def __init__(
        self,
        flexible: bool,
        regular: list[tuple[str, Construct]],
        tagged: dict[int, tuple[str, Construct, Any]],
        absent: list[tuple[str, Callable[[], Any]]],
        defaults: dict[str, Any],
    ) -> None:
        """`regular`: (name, construct) in wire order; `tagged`: tag -> (name, construct,
        default); `absent`: (name, its default's maker) of the fields a parse fills with their
        defaults (absent in this version, or tagged); `defaults`: every field's, for builds."""
        super().__init__()
        self._flexible = flexible
        self._regular = regular
        self._tagged = tagged
        self._absent = absent
        self._tag_order = sorted(tagged)
        self._defaults = defaults

    def _parse(self, stream: Any, context: Any, path: str) -> Parsed:
        obj = Parsed()
        for name, default in self._absent:
            obj[name] = default()
        for name, con in self._regular:
            obj[name] = con._parse(stream, context, path + "." + name)
        if self._flexible:
            self._parse_tags(obj, stream, path)
        return obj

    def _parse_tags(self, obj: Parsed, stream: Any, path: str) -> None:
        count = t.read_uvarint(stream, path)
        if count > t.remaining(stream):
            raise ProtocolError(f"{path}: {count} tagged fields exceed the frame")
        for _ in range(count):  # in any order, as Kafka's generated readers take them
            tag = t.read_uvarint(stream, path)
            size = t.read_uvarint(stream, path)
            if size > t.remaining(stream):
                raise ProtocolError(f"{path}: tagged field of {size} bytes exceeds the frame")
            data = stream_read(stream, size, path)
            known = self._tagged.get(tag)
            if known is not None:  # unknown tags are skipped, as Kafka does
                name, con, _ = known
                obj[name] = t.parse_exact(con, data, f"{path}.{name}")

    def _build(self, obj: Any, stream: Any, context: Any, path: str) -> Any:
        if obj is None:  # a struct field left out: built as its defaults, as Kafka's `new Struct()`
            obj = NO_FIELDS
        get = obj.get
        for name, con in self._regular:
            value = get(name, _MISSING)
            if value is _MISSING:
                value = self._defaults[name]
            con._build(value, stream, context, path + "." + name)
        if self._flexible:
            self._build_tags(obj, stream, path)
        return obj

    def _build_tags(self, obj: Any, stream: Any, path: str) -> None:
        present = []
        for tag in self._tag_order:
            name, con, default = self._tagged[tag]
            value = obj.get(name, default)
            if value != default:  # Kafka omits tagged fields that hold defaults
                present.append((tag, t.build_bytes(con, value, f"{path}.{name}")))
        header = t.encode_uvarint(len(present))
        stream_write(stream, header, len(header), path)
        for tag, data in present:
            prefix = t.encode_uvarint(tag) + t.encode_uvarint(len(data))
            stream_write(stream, prefix + data, len(prefix) + len(data), path)
