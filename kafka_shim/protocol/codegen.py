"""Straight-line Python codecs compiled from the construct structs.

The per-version construct structs (`structs.FieldsConstruct` over the constructs
of `protocol.types`) stay the schema of record, but interpreting them costs a
Python call, a stream read and a dict store per field. `derive` walks one
message version's struct once and generates a parse and a build function for
it: consecutive fixed-size fields, together with the length prefix of the
string or array that follows them, are read or written by one precompiled
`struct.Struct`; arrays become inline loops; parsing indexes the frame's bytes
at an explicit offset instead of reading a stream.

The generated code keeps every check of the constructs it replaces: lengths and
counts are bounded by the bytes left before slicing or looping, varints stop at
5 bytes, invalid UTF-8 is replaced as Java does, null is accepted only where nullable,
tags are read in any order, unknown tags are skipped, a tagged field is parsed within its own
bytes, and every failure is a ProtocolError. tests/protocol/test_codegen.py
proves the two paths equivalent for every message version.
"""

from __future__ import annotations

import itertools
import linecache
import math
import struct
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from io import BytesIO
from typing import Any

from construct import Construct

from kafka_shim.protocol import types as t
from kafka_shim.protocol.file_records import FileRecords, Spliced
from kafka_shim.protocol.structs import (
    NO_FIELDS,
    FieldsConstruct,
    NullableStructConstruct,
    Parsed,
    parsed_class,
)
from kafka_shim.protocol.types import ProtocolError, encode_uvarint, read_uvarint_at

# What malformed bytes raise inside generated parsers: struct.error and
# IndexError on truncation, ValueError from a conversion.
_PARSE_ERRORS = (struct.error, IndexError, ValueError)
# What a mapping holding values of the wrong type raises while being built.
_BUILD_ERRORS = (struct.error, TypeError, AttributeError, ValueError)

# Every byte value as a bytes object: a compact length's usual encoding (0..127).
_ONE_BYTE = tuple(bytes((value,)) for value in range(256))

# Arrays of numbers shorter than this are read and written by a precompiled
# struct.Struct per length; longer ones format their struct on the fly.
_SMALL_ARRAY = 16


# Structs of up to this many fields fill an empty Parsed key by key. Past it, the dict's
# resizes cost more than building a dict display (sized once) and copying it in:
# OffsetCommit v8 (6 and 5 fields) and Fetch v11 (its top level of 12) parse fastest
# at 10 (callgrind).
_STORED_FIELDS = 10


class Unsupported(Exception):
    """A construct the generator has no template for."""


@dataclass(frozen=True)
class Codec:
    """Parse and build for one message version."""

    # (frame, offset of the body) -> (value, offset just after the body)
    parse: Callable[[bytes, int], tuple[Parsed, int]]
    # A mapping holding FileRecords builds to Spliced parts (protocol.file_records).
    build: Callable[[Mapping[str, Any]], bytes | Spliced]


def derive(struct_: FieldsConstruct, what: str) -> Codec:
    """Generated code for `struct_`, or the construct itself where a field has no template."""
    try:
        return _Generator(what).compile(struct_)
    except Unsupported:
        return _interpreted(struct_, what)


def _interpreted(struct_: FieldsConstruct, what: str) -> Codec:
    def parse(data: bytes, pos: int) -> tuple[Parsed, int]:
        stream = BytesIO(data)
        stream.seek(pos)
        try:
            value = struct_._parse(stream, None, what)
        except ProtocolError:
            raise
        except Exception as exc:  # construct raises many kinds on short input
            raise ProtocolError(f"{what}: {exc}") from exc
        return value, stream.tell()

    def build(obj: Mapping[str, Any]) -> bytes:
        return t.build_bytes(struct_, obj, what)

    return Codec(parse, build)


# Helpers the generated code calls on its rarer paths.


_new_object = object.__new__
_set_slot = object.__setattr__


def _uuid_from_bytes(data: bytes) -> uuid.UUID:
    """uuid.UUID(bytes=data) at half the cost: the UUID's two slots set as unpickling does."""
    value = _new_object(uuid.UUID)
    _set_slot(value, "int", int.from_bytes(data))
    _set_slot(value, "is_safe", uuid.SafeUUID.unknown)
    return value


def _bad_length(path: str, length: int) -> ProtocolError:
    if length < 0:
        return ProtocolError(f"{path}: invalid length {length}")
    return ProtocolError(f"{path}: length {length} exceeds the frame")


def _null(path: str) -> Any:
    raise ProtocolError(f"{path}: null in a non-nullable field")


def _read_tags(data: bytes, pos: int, path: str) -> tuple[list[tuple[int, int, int]], int]:
    """(tag, start, stop) of each tagged field, validated, and the offset after them."""
    count, pos = read_uvarint_at(data, pos, 5, path)
    if count > len(data) - pos:
        raise ProtocolError(f"{path}: {count} tagged fields exceed the frame")
    spans = []  # in any order, as Kafka's generated readers take them
    for _ in range(count):
        tag, pos = read_uvarint_at(data, pos, 5, path)
        size, pos = read_uvarint_at(data, pos, 5, path)
        if size > len(data) - pos:
            raise ProtocolError(f"{path}: tagged field of {size} bytes exceeds the frame")
        spans.append((tag, pos, pos + size))
        pos += size
    return spans, pos


def _encode_tags(tags: list[tuple[int, bytes]]) -> bytes:
    parts = [encode_uvarint(len(tags))]
    for tag, data in tags:
        parts += (encode_uvarint(tag), encode_uvarint(len(data)), data)
    return b"".join(parts)


def _fixed_format(con: Construct) -> str | None:
    """The struct format character(s) of a fixed-size construct, else None."""
    if isinstance(con, t.Fixed):
        fmt: str = con._struct.format
        if not fmt.startswith(">"):
            raise Unsupported(f"fixed format {fmt}")
        return fmt[1:]
    if isinstance(con, t.BoolConstruct):
        return "?"  # unpacks any non-zero byte as True and packs truthiness, as BoolConstruct does
    if isinstance(con, t.UuidConstruct):
        return "16s"
    return None


class _Function:
    def __init__(self, header: str) -> None:
        self.lines = [header]

    def add(self, indent: int, text: str) -> None:
        self.lines.append("    " * indent + text)


class _Run:
    """Fixed-size reads or writes pending, to be done by one struct.Struct."""

    def __init__(self) -> None:
        self.fmt = ""
        self.items: list[str] = []  # parse: target variables; build: argument expressions
        self.uuids: list[str] = []  # parse: targets to convert from 16 bytes

    def add(self, fmt: str, item: str) -> None:
        self.fmt += fmt
        self.items.append(item)

    def clear(self) -> None:
        self.fmt = ""
        self.items = []
        self.uuids = []


_LITERAL_TYPES = (bool, int, str, bytes, type(None))
# Byte values written as they are: bytes, and records left in their files (protocol.file_records).
_KEPT = frozenset({bytes, FileRecords})


class _Generator:
    def __init__(self, what: str) -> None:
        self.what = what
        self.namespace: dict[str, Any] = {
            "ProtocolError": ProtocolError,
            "_uuid_from_bytes": _uuid_from_bytes,
            "_unpack_from": struct.unpack_from,
            "_pack": struct.pack,
            "_read_uvarint": read_uvarint_at,
            "_read_tags": _read_tags,
            "_bad_length": _bad_length,
            "_null": _null,
            "_uvarint_bytes": encode_uvarint,
            "_ONE_BYTE": _ONE_BYTE,
            "_encode_tags": _encode_tags,
            "_KEPT": _KEPT,
            "_splice": Spliced,
            "_PARSE_ERRORS": _PARSE_ERRORS,
            "_BUILD_ERRORS": _BUILD_ERRORS,
        }
        self.functions: list[_Function] = []
        self._counter = itertools.count()

    def name(self, prefix: str) -> str:
        return f"{prefix}{next(self._counter)}"

    def const(self, value: Any) -> str:
        """An expression for `value`: a literal where Python has one, else a global."""
        if isinstance(value, _LITERAL_TYPES) or (isinstance(value, float) and math.isfinite(value)):
            return repr(value)
        name = self.name("_k")
        self.namespace[name] = value
        return name

    def fresh_default(self, value: Any) -> str:
        """Like Field.default_value(): every parse gets its own list."""
        if isinstance(value, list):
            return f"list({self.const(value)})" if value else "[]"
        return self.const(value)

    def compile(self, struct_: FieldsConstruct) -> Codec:
        parse = _Function("def parse(data, pos):")
        parse.add(1, "end = len(data)")
        parse.add(1, "try:")
        self.parse_fields(parse, struct_, "value", self.what, 2)
        parse.add(1, "except ProtocolError:")
        parse.add(2, "raise")
        parse.add(1, "except _PARSE_ERRORS as exc:")
        parse.add(2, f"raise ProtocolError({self.what + ': '!r} + str(exc)) from exc")
        parse.add(1, "return value, pos")

        build = _Function("def build(obj):")
        build.add(1, "out = []")
        build.add(1, "try:")
        self.build_fields(build, struct_, "obj", self.what, 2)
        if build.lines[-1].endswith("try:"):
            build.add(2, "pass")  # a struct without fields at this version writes nothing
        build.add(1, "except ProtocolError:")
        build.add(2, "raise")
        build.add(1, "except _BUILD_ERRORS as exc:")
        build.add(2, f"raise ProtocolError({self.what + ': '!r} + str(exc)) from exc")
        # Record bytes still in their files make the build return parts around them.
        build.add(1, "try:")
        build.add(2, "return b''.join(out)")
        build.add(1, "except TypeError:")
        build.add(2, "return _splice(out)")

        source = "\n\n".join("\n".join(f.lines) for f in [*self.functions, parse, build]) + "\n"
        # A filename of its own, registered with linecache, lets tracebacks
        # through generated code show the generated lines.
        filename = f"<codec {self.what}>"
        linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
        exec(compile(source, filename, "exec"), self.namespace)
        return Codec(self.namespace["parse"], self.namespace["build"])

    # Parsing: code that reads from `data` at `pos` (bounded by `end`) into a variable.

    def parse_fields(self, fn: _Function, fc: FieldsConstruct, target: str, path: str, ind: int) -> None:
        run = _Run()
        regular = []
        for name, con in fc._regular:
            var = self.name("v")
            regular.append((name, var))
            self.parse_value(fn, con, var, f"{path}.{name}", ind, run)
        self.flush_reads(fn, run, ind)
        # Key order as FieldsConstruct fills its Parsed: absent and tagged
        # fields (holding defaults until a tag says otherwise) first, then the
        # regular ones. Small structs store them one by one into an empty Parsed:
        # a dict display handed to the class is built, copied and freed (a fifth more).
        entries = [(name, self.fresh_default(default())) for name, default in fc._absent]
        entries += regular
        cls = self.const(parsed_class(tuple(name for name, _ in entries)))
        if len(entries) <= _STORED_FIELDS:
            fn.add(ind, f"{target} = {cls}()")
            for name, expr in entries:
                fn.add(ind, f"{target}[{name!r}] = {expr}")
        else:
            fn.add(ind, f"{target} = {cls}({{{', '.join(f'{name!r}: {expr}' for name, expr in entries)}}})")
        if fc._flexible:
            self.parse_tags(fn, fc, target, path, ind)

    def parse_tags(self, fn: _Function, fc: FieldsConstruct, target: str, path: str, ind: int) -> None:
        fn.add(ind, "if data[pos] == 0:")  # the usual case: no tagged fields
        fn.add(ind + 1, "pos += 1")
        fn.add(ind, "else:")
        spans = self.name("spans")
        fn.add(ind + 1, f"{spans}, pos = _read_tags(data, pos, {path!r})")
        if not fc._tag_order:
            return
        fn.add(ind + 1, f"for tag, start, stop in {spans}:")
        for index, tag in enumerate(fc._tag_order):
            name, con, _ = fc._tagged[tag]
            parser = self.tagged_parser(con, f"{path}.{name}")
            fn.add(ind + 2, f"{'if' if index == 0 else 'elif'} tag == {tag}:")
            fn.add(ind + 3, f"{target}[{name!r}] = {parser}(data[start:stop])")

    def tagged_parser(self, con: Construct, path: str) -> str:
        """A function parsing one tagged field from its own bytes, as construct does."""
        name = self.name("_parse_tag")
        fn = _Function(f"def {name}(data):")
        fn.add(1, "pos = 0")
        fn.add(1, "end = len(data)")
        run = _Run()
        self.parse_value(fn, con, "value", path, 1, run)
        self.flush_reads(fn, run, 1)
        fn.add(1, "return value")
        self.functions.append(fn)
        return name

    def parse_value(self, fn: _Function, con: Construct, var: str, path: str, ind: int, run: _Run) -> None:
        fmt = _fixed_format(con)
        if fmt is not None:
            run.add(fmt, var)
            if isinstance(con, t.UuidConstruct):
                run.uuids.append(var)
        elif isinstance(con, t.Sized | t.ArrayConstruct):
            length = self.name("n")
            if con._compact:
                self.flush_reads(fn, run, ind)
                fn.add(ind, f"{length} = data[pos] - 1")
                fn.add(ind, f"if {length} < 0x7F:")
                fn.add(ind + 1, "pos += 1")
                fn.add(ind, "else:")
                fn.add(ind + 1, f"{length}, pos = _read_uvarint(data, pos, 5, {path!r})")
                fn.add(ind + 1, f"{length} -= 1")
            else:
                run.add("i" if isinstance(con, t.ArrayConstruct) or con._wide else "h", length)
                self.flush_reads(fn, run, ind)
            fn.add(ind, f"if 0 <= {length} <= end - pos:")
            if isinstance(con, t.Sized):
                piece = f"data[pos:pos + {length}]"
                if con._text:
                    # Strict UTF-8 first: what nearly every string is, and decode() without
                    # arguments skips naming the codec and the error handler (a fifth less).
                    fn.add(ind + 1, "try:")
                    fn.add(ind + 2, f"{var} = {piece}.decode()")
                    fn.add(ind + 1, "except UnicodeDecodeError:")
                    fn.add(ind + 2, f"{var} = {piece}.decode('utf-8', {t.JAVA_REPLACE!r})")
                else:
                    fn.add(ind + 1, f"{var} = {piece}")
                fn.add(ind + 1, f"pos += {length}")
            else:
                self.parse_elements(fn, con._element, var, length, path, ind + 1)
            if con._nullable:
                fn.add(ind, f"elif {length} == -1:")
                fn.add(ind + 1, f"{var} = None")
            fn.add(ind, "else:")
            fn.add(ind + 1, f"raise _bad_length({path!r}, {length})")
        elif isinstance(con, FieldsConstruct):
            self.flush_reads(fn, run, ind)
            self.parse_fields(fn, con, var, path, ind)
        elif isinstance(con, NullableStructConstruct):
            marker = self.name("m")
            run.add("b", marker)
            self.flush_reads(fn, run, ind)
            fn.add(ind, f"if {marker} < 0:")
            fn.add(ind + 1, f"{var} = None")
            fn.add(ind, "else:")
            self.parse_fields(fn, con._struct, var, path, ind + 1)
        else:
            raise Unsupported(type(con).__name__)

    def parse_elements(
        self, fn: _Function, element: Construct, var: str, count: str, path: str, ind: int
    ) -> None:
        fmt = _fixed_format(element)
        if fmt is not None and not isinstance(element, t.UuidConstruct):
            small = self.const(tuple(struct.Struct(f">{n}{fmt}").unpack_from for n in range(_SMALL_ARRAY)))
            fn.add(ind, f"if {count} < {_SMALL_ARRAY}:")
            fn.add(ind + 1, f"{var} = list({small}[{count}](data, pos))")
            fn.add(ind, "else:")
            fn.add(ind + 1, f"{var} = list(_unpack_from('>%d{fmt}' % {count}, data, pos))")
            fn.add(ind, f"pos += {count} * {struct.calcsize('>' + fmt)}")
            return
        item = self.name("item")
        fn.add(ind, f"{var} = []")
        fn.add(ind, f"for _ in range({count}):")
        run = _Run()
        self.parse_value(fn, element, item, path, ind + 1, run)
        self.flush_reads(fn, run, ind + 1)
        # list.append called as a method, which the interpreter inlines; a bound
        # append would allocate a method object per array, most holding one item.
        fn.add(ind + 1, f"{var}.append({item})")

    def flush_reads(self, fn: _Function, run: _Run, ind: int) -> None:
        if not run.items:
            return
        packer = struct.Struct(">" + run.fmt)
        unpack = self.const(packer.unpack_from)
        fn.add(ind, f"{', '.join(run.items)}, = {unpack}(data, pos)")
        fn.add(ind, f"pos += {packer.size}")
        for var in run.uuids:
            fn.add(ind, f"{var} = _uuid_from_bytes({var})")
        run.clear()

    # Building: code that appends the encoding of a value to `out`, with out.append(...)
    # called as a method, which the interpreter inlines (a bound append is a call).

    def build_fields(self, fn: _Function, fc: FieldsConstruct, obj: str, path: str, ind: int) -> None:
        # Called as a method on each read (the interpreter's cached method call) rather
        # than bound once: binding allocates a method object, dearer than a struct's reads.
        get = f"{obj}.get"
        run = _Run()
        for name, con in fc._regular:
            value = f"{get}({name!r}, {self.const(fc._defaults[name])})"
            self.build_value(fn, con, value, f"{path}.{name}", ind, run)
        if fc._flexible and not fc._tag_order:
            if run.items:
                run.add("B", "0")  # an empty tagged-field section
            else:
                fn.add(ind, "out.append(b'\\x00')")
        self.flush_writes(fn, run, ind)
        if fc._flexible and fc._tag_order:
            self.build_tags(fn, fc, get, path, ind)

    def build_tags(self, fn: _Function, fc: FieldsConstruct, get: str, path: str, ind: int) -> None:
        tags = self.name("tags")
        fn.add(ind, f"{tags} = []")
        for tag in fc._tag_order:
            name, con, default = fc._tagged[tag]
            var = self.name("v")
            default_expr = self.const(default)
            fn.add(ind, f"{var} = {get}({name!r}, {default_expr})")
            fn.add(ind, f"if {var} != {default_expr}:")  # Kafka omits tagged fields holding defaults
            fn.add(ind + 1, f"{tags}.append(({tag}, {self.tagged_builder(con, f'{path}.{name}')}({var})))")
        fn.add(ind, f"out.append(_encode_tags({tags}) if {tags} else b'\\x00')")

    def tagged_builder(self, con: Construct, path: str) -> str:
        name = self.name("_build_tag")
        fn = _Function(f"def {name}(value):")
        fn.add(1, "out = []")
        run = _Run()
        self.build_value(fn, con, "value", path, 1, run)
        self.flush_writes(fn, run, 1)
        fn.add(1, "return b''.join(out)")
        self.functions.append(fn)
        return name

    def build_value(self, fn: _Function, con: Construct, value: str, path: str, ind: int, run: _Run) -> None:
        fmt = _fixed_format(con)
        if fmt is not None:
            run.add(fmt, f"{value}.bytes" if isinstance(con, t.UuidConstruct) else value)
            return
        if isinstance(con, FieldsConstruct):
            self.flush_writes(fn, run, ind)
            if value.isidentifier():
                var = value  # an array's item: never left out
            else:
                var = self.name("o")
                fn.add(ind, f"{var} = {value}")
                fn.add(ind, f"if {var} is None:")  # a struct field left out: its defaults
                fn.add(ind + 1, f"{var} = {self.const(NO_FIELDS)}")
            self.build_fields(fn, con, var, path, ind)
            return
        if isinstance(con, NullableStructConstruct):
            self.flush_writes(fn, run, ind)
            var = self.name("o")
            fn.add(ind, f"{var} = {value}")
            fn.add(ind, f"if {var} is None:")
            fn.add(ind + 1, "out.append(b'\\xff')")
            fn.add(ind, "else:")
            fn.add(ind + 1, "out.append(b'\\x01')")
            self.build_fields(fn, con._struct, var, path, ind + 1)
            return
        if not isinstance(con, t.Sized | t.ArrayConstruct):
            raise Unsupported(type(con).__name__)
        var = self.name("v")
        length = self.name("n")
        if_null = "-1" if con._nullable else f"_null({path!r})"
        if isinstance(con, t.Sized):
            data = self.name("b")
            encode = (
                f"{var}.encode()" if con._text else f"({var} if {var}.__class__ in _KEPT else bytes({var}))"
            )
            fn.add(ind, f"{data} = {encode} if ({var} := {value}) is not None else b''")
            fn.add(ind, f"{length} = len({data}) if {var} is not None else {if_null}")
        else:
            fn.add(ind, f"{length} = len({var}) if ({var} := {value}) is not None else {if_null}")
        if con._compact:
            self.flush_writes(fn, run, ind)
            # Lengths under 127 (nearly all) take their one byte from a table, not a call.
            fn.add(
                ind,
                f"out.append(_ONE_BYTE[{length} + 1] if {length} < 0x7F else _uvarint_bytes({length} + 1))",
            )
        else:
            run.add("i" if isinstance(con, t.ArrayConstruct) or con._wide else "h", length)
            self.flush_writes(fn, run, ind)
        if isinstance(con, t.Sized):
            fn.add(ind, f"out.append({data})")
        else:
            self.build_elements(fn, con._element, var, length, path, ind)

    def build_elements(
        self, fn: _Function, element: Construct, var: str, count: str, path: str, ind: int
    ) -> None:
        fmt = _fixed_format(element)
        if fmt is not None and not isinstance(element, t.UuidConstruct):
            small = self.const(tuple(struct.Struct(f">{n}{fmt}").pack for n in range(_SMALL_ARRAY)))
            fn.add(ind, f"if 0 < {count} < {_SMALL_ARRAY}:")
            fn.add(ind + 1, f"out.append({small}[{count}](*{var}))")
            fn.add(ind, f"elif {count} >= {_SMALL_ARRAY}:")
            fn.add(ind + 1, f"out.append(_pack('>%d{fmt}' % {count}, *{var}))")
            return
        item = self.name("item")
        fn.add(ind, f"for {item} in {var} or ():")
        run = _Run()
        self.build_value(fn, element, item, path, ind + 1, run)
        self.flush_writes(fn, run, ind + 1)

    def flush_writes(self, fn: _Function, run: _Run, ind: int) -> None:
        if not run.items:
            return
        pack = self.const(struct.Struct(">" + run.fmt).pack)
        fn.add(ind, f"out.append({pack}({', '.join(run.items)}))")
        run.clear()
