"""A resolved FileDescriptorProto printed as a .proto file, as Confluent's registry stores a
Protobuf schema (its canonical text) even when a client registered a base64 descriptor
(confluent-kafka Python does). Type names are printed fully qualified (a leading dot), so the
text resolves as the descriptor did; protobuf_schemas keeps the text only where parsing it back
gives the same descriptor."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from google.protobuf import descriptor_pb2
from google.protobuf.descriptor import FieldDescriptor

FieldProto = descriptor_pb2.FieldDescriptorProto
_LABELS = {
    FieldProto.LABEL_OPTIONAL: "optional",
    FieldProto.LABEL_REQUIRED: "required",
    FieldProto.LABEL_REPEATED: "repeated",
}
INDENT = "  "


def proto_text(proto: descriptor_pb2.FileDescriptorProto) -> str:
    syntax = proto.syntax or "proto2"
    lines = [f'syntax = "{syntax}";']
    if proto.package:
        lines.append(f"package {proto.package};")
    for index, dependency in enumerate(proto.dependency):
        public = "public " if index in proto.public_dependency else ""
        lines.append(f'import {public}"{dependency}";')
    lines += [f"option {o};" for o in _options(proto.options)]
    scope = f".{proto.package}" if proto.package else ""
    for message in proto.message_type:
        lines += _message(message, syntax, 0, scope)
    for enum in proto.enum_type:
        lines += _enum(enum, 0)
    for service in proto.service:
        lines += _service(service)
    return "\n".join(lines) + "\n"


def _value(field: FieldDescriptor, value: Any) -> str:
    if field.type == FieldDescriptor.TYPE_STRING:
        return '"' + str(value).replace("\\", "\\\\").replace('"', '\\"') + '"'
    if field.type == FieldDescriptor.TYPE_BOOL:
        return "true" if value else "false"
    if field.type == FieldDescriptor.TYPE_ENUM:
        return str(field.enum_type.values_by_number[value].name)
    return str(value)


def _repeated(field: FieldDescriptor) -> bool:
    repeated = getattr(field, "is_repeated", None)  # protobuf 6+; `label` before
    return bool(repeated) if repeated is not None else field.label == FieldDescriptor.LABEL_REPEATED


def _options(options: Any) -> Iterator[str]:
    for field, value in options.ListFields():
        if not _repeated(field) and field.type != FieldDescriptor.TYPE_MESSAGE:
            yield f"{field.name} = {_value(field, value)}"


def _type(field: Any) -> str:
    if field.type_name:
        return str(field.type_name)
    return str(FieldProto.Type.Name(field.type)).removeprefix("TYPE_").lower()


def _field(field: Any, syntax: str, entries: dict[str, Any]) -> str:
    options = [o for o in _options(field.options)]
    if field.HasField("default_value"):
        default = field.default_value if field.type != FieldProto.TYPE_STRING else f'"{field.default_value}"'
        options.insert(0, f"default = {default}")
    suffix = f" [{', '.join(options)}]" if options else ""
    entry = entries.get(field.type_name)
    if entry is not None and field.label == FieldProto.LABEL_REPEATED:
        key, value = entry.field[0], entry.field[1]
        return f"map<{_type(key)}, {_type(value)}> {field.name} = {field.number}{suffix};"
    if syntax == "proto3":
        label = (
            "repeated "
            if field.label == FieldProto.LABEL_REPEATED
            else "optional "
            if field.proto3_optional
            else ""
        )
    else:
        label = _LABELS[field.label] + " "
    return f"{label}{_type(field)} {field.name} = {field.number}{suffix};"


def _message(message: Any, syntax: str, depth: int, scope: str = "") -> list[str]:
    pad = INDENT * depth
    name = f"{scope}.{message.name}"
    entries = {f"{name}.{n.name}": n for n in message.nested_type if n.options.map_entry}
    lines = [f"{pad}message {message.name} {{"]
    lines += [f"{pad}{INDENT}option {o};" for o in _options(message.options)]
    members: dict[int, list[Any]] = {}
    for field in message.field:
        if field.HasField("oneof_index") and not field.proto3_optional:
            members.setdefault(field.oneof_index, []).append(field)
    printed: set[int] = set()
    for field in message.field:  # in declaration order, a oneof where its first field is
        if field.HasField("oneof_index") and not field.proto3_optional:
            if field.oneof_index not in printed:
                printed.add(field.oneof_index)
                lines.append(f"{pad}{INDENT}oneof {message.oneof_decl[field.oneof_index].name} {{")
                lines += [
                    f"{pad}{INDENT * 2}{_field(f, 'proto3', entries)}" for f in members[field.oneof_index]
                ]
                lines.append(f"{pad}{INDENT}}}")
        else:
            lines.append(f"{pad}{INDENT}{_field(field, syntax, entries)}")
    for nested in message.nested_type:
        if not nested.options.map_entry:
            lines += _message(nested, syntax, depth + 1, name)
    for enum in message.enum_type:
        lines += _enum(enum, depth + 1)
    lines += _reserved(message, pad + INDENT)
    lines.append(f"{pad}}}")
    return lines


def _reserved(declared: Any, pad: str) -> list[str]:
    lines = []
    ranges = []
    for span in declared.reserved_range:
        end = span.end - 1  # exclusive in a message descriptor
        ranges.append(
            str(span.start) if span.start == end else f"{span.start} to {'max' if end >= 536870911 else end}"
        )
    if ranges:
        lines.append(f"{pad}reserved {', '.join(ranges)};")
    if declared.reserved_name:
        lines.append(
            f"{pad}reserved {', '.join(repr(n).replace(chr(39), chr(34)) for n in declared.reserved_name)};"
        )
    return lines


def _enum(enum: Any, depth: int) -> list[str]:
    pad = INDENT * depth
    lines = [f"{pad}enum {enum.name} {{"]
    lines += [f"{pad}{INDENT}option {o};" for o in _options(enum.options)]
    for value in enum.value:
        options = list(_options(value.options))
        suffix = f" [{', '.join(options)}]" if options else ""
        lines.append(f"{pad}{INDENT}{value.name} = {value.number}{suffix};")
    lines.append(f"{pad}}}")
    return lines


def _service(service: Any) -> list[str]:
    lines = [f"service {service.name} {{"]
    for method in service.method:
        request = f"stream {method.input_type}" if method.client_streaming else method.input_type
        answer = f"stream {method.output_type}" if method.server_streaming else method.output_type
        lines.append(f"{INDENT}rpc {method.name} ({request}) returns ({answer});")
    lines.append("}")
    return lines
