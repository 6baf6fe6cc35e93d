"""Protobuf schemas: a .proto file's text (what Java's KafkaProtobufSerializer registers) or a
base64 FileDescriptorProto (what confluent-kafka Python's ProtobufSerializer registers), each
resolved in a descriptor pool with the files it imports (its references, and Google's
well-known types), which refuses what does not hold together.

Compatibility follows Confluent's ProtobufSchema diff (its protobuf.diff package), of which
these checks are made, everything else being compatible as there: PACKAGE_CHANGED,
MESSAGE_REMOVED, FIELD_KIND_CHANGED (scalar or enum / message / map), FIELD_SCALAR_KIND_CHANGED
(between Confluent's groups of wire-compatible scalars), FIELD_NAMED_TYPE_CHANGED (another
message type), FIELD_NUMERIC_LABEL_CHANGED (a numeric field made repeated or not),
REQUIRED_FIELD_ADDED and REQUIRED_FIELD_REMOVED (proto2), ONEOF_FIELD_REMOVED,
FIELD_MOVED_TO_EXISTING_ONEOF and MULTIPLE_FIELDS_MOVED_TO_ONEOF. Options, services and
comments are not compared (they change nothing on the wire)."""

from __future__ import annotations

import base64
import binascii
import importlib
from collections.abc import Iterator, Sequence
from typing import Any, NamedTuple

from google.protobuf import descriptor_pb2, descriptor_pool
from google.protobuf.message import DecodeError

from kafka_shim.shim.schema_registry.formats import PROTOBUF, SchemaParseError
from kafka_shim.shim.schema_registry.formats.protobuf_print import proto_text
from kafka_shim.shim.schema_registry.formats.protobuf_text import file_descriptor

FieldProto = descriptor_pb2.FieldDescriptorProto
MAIN_FILE = "schema.proto"  # the name of a registered file no reference names
WELL_KNOWN = "google/protobuf/"
SERIALIZED = "serialized"
# Confluent's FieldSchemaDiff.ScalarKind: scalars one can change into another of its group.
_SCALAR_GROUPS = {
    **dict.fromkeys(
        (FieldProto.TYPE_INT32, FieldProto.TYPE_INT64, FieldProto.TYPE_UINT32, FieldProto.TYPE_UINT64,
         FieldProto.TYPE_BOOL, FieldProto.TYPE_ENUM), "GENERAL_NUMBER"),
    **dict.fromkeys((FieldProto.TYPE_SINT32, FieldProto.TYPE_SINT64), "SIGNED_NUMBER"),
    **dict.fromkeys((FieldProto.TYPE_STRING, FieldProto.TYPE_BYTES), "STRING_OR_BYTES"),
    **dict.fromkeys((FieldProto.TYPE_FIXED32, FieldProto.TYPE_SFIXED32), "FIXED32"),
    **dict.fromkeys((FieldProto.TYPE_FIXED64, FieldProto.TYPE_SFIXED64), "FIXED64"),
    FieldProto.TYPE_FLOAT: "FLOAT",
    FieldProto.TYPE_DOUBLE: "DOUBLE",
}  # fmt: skip
_LENGTH_DELIMITED = (FieldProto.TYPE_STRING, FieldProto.TYPE_BYTES, FieldProto.TYPE_MESSAGE)


def _descriptor(text: str, name: str) -> descriptor_pb2.FileDescriptorProto:
    """The text as a FileDescriptorProto: base64 of one, else a .proto file."""
    compact = "".join(text.split())
    if _is_base64(text):
        try:
            proto = descriptor_pb2.FileDescriptorProto.FromString(base64.b64decode(compact, validate=True))
        except (binascii.Error, DecodeError, ValueError):
            pass
        else:
            proto.name = name
            return proto
    return file_descriptor(text, name)


class ProtobufParsed:
    schema_type = PROTOBUF

    def __init__(self, resolved: descriptor_pb2.FileDescriptorProto, text: str | None = None) -> None:
        self.proto = resolved
        self.text = text  # the .proto file printed from a base64 descriptor, where it round-trips

    def stored(self, given: str) -> str:
        """What is stored: a .proto file, as Confluent stores Protobuf schemas, also for a
        base64 descriptor where the printed file parses back to the same descriptor."""
        return self.text or given

    def canonical(self) -> str:
        comparable = descriptor_pb2.FileDescriptorProto()
        comparable.CopyFrom(self.proto)
        comparable.ClearField("name")
        comparable.ClearField("source_code_info")
        comparable.syntax = comparable.syntax or "proto2"
        for message in _all_messages(comparable.message_type):
            for field in message.field:
                field.ClearField("json_name")
        return base64.b64encode(comparable.SerializeToString(deterministic=True)).decode("ascii")

    def formatted(self, fmt: str | None) -> str | None:
        """`serialized`: the resolved FileDescriptorProto in base64 (Confluent's format, what
        confluent-kafka's Protobuf deserializer asks for)."""
        if fmt != SERIALIZED:
            return None
        return base64.b64encode(self.proto.SerializeToString(deterministic=True)).decode("ascii")

    def incompatibilities(self, writer: Any) -> list[str]:
        """Confluent's SchemaDiff.compare(writer, reader): the original is what was written."""
        return list(_differences(writer.proto, self.proto))


def parse(text: str, dependencies: Sequence[tuple[str, str]]) -> ProtobufParsed:
    parsed = ProtobufParsed(_resolved(_descriptor(text, MAIN_FILE), dependencies))
    if _is_base64(text):
        printed = proto_text(parsed.proto)
        try:
            again = ProtobufParsed(_resolved(file_descriptor(printed, MAIN_FILE), dependencies))
        except SchemaParseError:
            return parsed  # what this printer cannot say: stored as given
        if again.canonical() == parsed.canonical():
            parsed.text = printed
    return parsed


def _is_base64(text: str) -> bool:
    compact = "".join(text.split())
    return bool(compact) and not any(c in compact for c in "{;")


def _resolved(
    proto: descriptor_pb2.FileDescriptorProto, dependencies: Sequence[tuple[str, str]]
) -> descriptor_pb2.FileDescriptorProto:
    pool = descriptor_pool.DescriptorPool()
    added: set[str] = set()
    try:
        for name, dependency in dependencies:
            _add(pool, _descriptor(dependency, name), added)
        _add(pool, proto, added)
        resolved = descriptor_pb2.FileDescriptorProto()
        pool.FindFileByName(proto.name).CopyToProto(resolved)
    except SchemaParseError:
        raise
    except Exception as exc:  # the pool's TypeError/KeyError name what does not resolve
        raise SchemaParseError(f"{type(exc).__name__}: {exc}") from exc
    return resolved


def _add(
    pool: descriptor_pool.DescriptorPool, proto: descriptor_pb2.FileDescriptorProto, added: set[str]
) -> None:
    """Add `proto` after the well-known files it imports that no reference supplied."""
    for imported in proto.dependency:
        if imported not in added and imported.startswith(WELL_KNOWN):
            try:  # the module of a well-known file registers it in the default pool
                importlib.import_module(imported.removesuffix(".proto").replace("/", ".") + "_pb2")
                known = descriptor_pool.Default().FindFileByName(imported)
            except (ImportError, KeyError):
                raise SchemaParseError(
                    f"import {imported}: not a well-known type, and no reference names it"
                ) from None
            well_known = descriptor_pb2.FileDescriptorProto()
            known.CopyToProto(well_known)
            _add(pool, well_known, added)
    if proto.name not in added:
        pool.Add(proto)
        added.add(proto.name)


def _all_messages(messages: Any, prefix: str = "") -> Iterator[Any]:
    for message in messages:
        yield message
        yield from _all_messages(message.nested_type)


def _named_messages(proto: descriptor_pb2.FileDescriptorProto) -> dict[str, descriptor_pb2.DescriptorProto]:
    """Every message but map entries, by its name within the package."""
    found: dict[str, descriptor_pb2.DescriptorProto] = {}

    def walk(messages: Any, prefix: str) -> None:
        for message in messages:
            name = f"{prefix}{message.name}"
            if not message.options.map_entry:
                found[name] = message
            walk(message.nested_type, f"{name}.")

    walk(proto.message_type, "")
    return found


def _differences(
    original: descriptor_pb2.FileDescriptorProto, update: descriptor_pb2.FileDescriptorProto
) -> Iterator[str]:
    if original.package != update.package:
        yield f"PACKAGE_CHANGED from {original.package!r} to {update.package!r}"
    before, after = _named_messages(original), _named_messages(update)
    sides = (Side(original.package, _map_entries(original)), Side(update.package, _map_entries(update)))
    for name, message in before.items():
        if name not in after:
            yield f"MESSAGE_REMOVED {name}"
            continue
        yield from _message_differences(name, message, after[name], sides)


def _map_entries(proto: descriptor_pb2.FileDescriptorProto) -> dict[str, descriptor_pb2.DescriptorProto]:
    found = {}
    for message in _all_messages(proto.message_type):
        for nested in message.nested_type:
            if nested.options.map_entry:
                found[nested.name] = nested
    return found


class Side(NamedTuple):
    """One of the two files compared: its package and its map entry types by name."""

    package: str
    entries: dict[str, descriptor_pb2.DescriptorProto]


def _message_differences(where: str, original: Any, update: Any, sides: tuple[Side, Side]) -> Iterator[str]:
    old = {field.number: field for field in original.field}
    new = {field.number: field for field in update.field}
    for number, field in old.items():
        at = f"{where}.{field.name} (#{number})"
        changed = new.get(number)
        if changed is None:
            if field.label == FieldProto.LABEL_REQUIRED:
                yield f"REQUIRED_FIELD_REMOVED {at}"
            continue
        yield from _field_differences(at, field, changed, sides)
    for number, field in new.items():
        if field.label == FieldProto.LABEL_REQUIRED and (
            number not in old or old[number].label != FieldProto.LABEL_REQUIRED
        ):
            yield f"REQUIRED_FIELD_ADDED {where}.{field.name} (#{number})"
    yield from _oneof_differences(where, original, update)


def _kind(field: Any, entries: dict[str, Any]) -> str:
    if field.type == FieldProto.TYPE_MESSAGE:
        short = field.type_name.rsplit(".", 1)[-1]
        return "MAP" if field.label == FieldProto.LABEL_REPEATED and short in entries else "MESSAGE"
    return "SCALAR"


def _local(type_name: str, package: str) -> str:
    name = type_name.lstrip(".")
    return name[len(package) + 1 :] if package and name.startswith(package + ".") else name


def _field_differences(at: str, original: Any, update: Any, sides: tuple[Side, Side]) -> Iterator[str]:
    before, after = sides
    kind, new_kind = _kind(original, before.entries), _kind(update, after.entries)
    if kind != new_kind:
        yield f"FIELD_KIND_CHANGED {at}: {kind} to {new_kind}"
        return
    if kind == "SCALAR" and _SCALAR_GROUPS[original.type] != _SCALAR_GROUPS[update.type]:
        yield f"FIELD_SCALAR_KIND_CHANGED {at}: {_type_name(original)} to {_type_name(update)}"
    elif kind == "MESSAGE" and _local(original.type_name, before.package) != _local(
        update.type_name, after.package
    ):
        yield f"FIELD_NAMED_TYPE_CHANGED {at}: {original.type_name} to {update.type_name}"
    elif kind == "MAP":
        old_entry = before.entries[original.type_name.rsplit(".", 1)[-1]]
        new_entry = after.entries[update.type_name.rsplit(".", 1)[-1]]
        for old_part, new_part in zip(old_entry.field, new_entry.field, strict=False):
            yield from _field_differences(f"{at} {old_part.name}", old_part, new_part, sides)
    repeated = original.label == FieldProto.LABEL_REPEATED
    relabeled = repeated != (update.label == FieldProto.LABEL_REPEATED)
    if kind == "SCALAR" and relabeled and original.type not in _LENGTH_DELIMITED:
        yield f"FIELD_NUMERIC_LABEL_CHANGED {at}"


def _oneof_differences(where: str, original: Any, update: Any) -> Iterator[str]:
    def members(message: Any) -> dict[str, set[int]]:
        groups: dict[str, set[int]] = {}
        for field in message.field:
            if field.HasField("oneof_index") and not field.proto3_optional:
                groups.setdefault(message.oneof_decl[field.oneof_index].name, set()).add(field.number)
        return groups

    before, after = members(original), members(update)
    outside = {f.number for f in original.field} - set().union(*before.values())
    for name, numbers in after.items():
        if name in before:
            for number in sorted(before[name] - numbers):
                yield f"ONEOF_FIELD_REMOVED {where}.{name} (#{number})"
            for number in sorted(numbers & outside):
                yield f"FIELD_MOVED_TO_EXISTING_ONEOF {where}.{name} (#{number})"
        elif len(numbers & outside) > 1:
            moved = ", ".join(f"#{number}" for number in sorted(numbers & outside))
            yield f"MULTIPLE_FIELDS_MOVED_TO_ONEOF {where}.{name}: {moved}"


def _type_name(field: Any) -> str:
    return FieldProto.Type.Name(field.type).removeprefix("TYPE_").lower()
