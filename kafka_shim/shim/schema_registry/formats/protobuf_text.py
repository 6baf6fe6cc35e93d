"""A .proto file's text as a FileDescriptorProto: parsed by proto-schema-parser (pure Python),
its syntax tree turned into the descriptor protoc would write, before type names are resolved
(shim.schema_registry.formats.protobuf_schemas resolves them in a descriptor pool, which also
refuses what does not hold together: an unknown type, a duplicate number)."""

from __future__ import annotations

from typing import Any

from antlr4.error.ErrorListener import ErrorListener
from google.protobuf import descriptor_pb2
from proto_schema_parser import ast
from proto_schema_parser.parser import Parser

from kafka_shim.shim.schema_registry.formats import SchemaParseError

FieldProto = descriptor_pb2.FieldDescriptorProto
SCALARS = {
    name: getattr(FieldProto, f"TYPE_{name.upper()}")
    for name in (
        "double", "float", "int64", "uint64", "int32", "fixed64", "fixed32", "bool", "string",
        "bytes", "uint32", "sfixed32", "sfixed64", "sint32", "sint64",
    )
}  # fmt: skip
_LABELS = {
    None: FieldProto.LABEL_OPTIONAL,
    ast.FieldCardinality.OPTIONAL: FieldProto.LABEL_OPTIONAL,
    ast.FieldCardinality.REQUIRED: FieldProto.LABEL_REQUIRED,
    ast.FieldCardinality.REPEATED: FieldProto.LABEL_REPEATED,
}


class _Refuse(ErrorListener):  # type: ignore[misc]
    """ANTLR recovers from a syntax error with a line on stderr; a schema with one is refused."""

    def syntaxError(self, recognizer: Any, symbol: Any, line: int, column: int, msg: str, e: Any) -> None:
        raise SchemaParseError(f"line {line}:{column}: {msg}")


def _strict(recognizer: Any) -> None:
    recognizer.removeErrorListeners()
    recognizer.addErrorListener(_Refuse())


def file_descriptor(text: str, name: str) -> descriptor_pb2.FileDescriptorProto:
    try:
        tree = Parser(setup_lexer=_strict, setup_parser=_strict).parse(text)
    except SchemaParseError:
        raise
    except Exception as exc:  # the parser's own errors carry no common base
        raise SchemaParseError(f"not a .proto file: {exc}") from exc
    proto = descriptor_pb2.FileDescriptorProto(name=name, syntax=tree.syntax or "proto2")
    proto3 = proto.syntax == "proto3"
    for element in tree.file_elements:
        if isinstance(element, ast.Package):
            proto.package = element.name
        elif isinstance(element, ast.Import):
            proto.dependency.append(element.name)
            if element.public:
                proto.public_dependency.append(len(proto.dependency) - 1)
        elif isinstance(element, ast.Option):
            _option(proto.options, element)
        elif isinstance(element, ast.Message):
            _message(proto.message_type.add(), element, proto3)
        elif isinstance(element, ast.Enum):
            _enum(proto.enum_type.add(), element)
        elif isinstance(element, ast.Service):
            _service(proto.service.add(), element)
        elif isinstance(element, ast.Extension):
            raise SchemaParseError("extensions are not supported by this registry")
    return proto


def _option(options: Any, option: ast.Option) -> None:
    """A standard option by its field name (java_package, deprecated, packed...); custom
    options (parenthesized) do not change how data is written and are left out."""
    name = option.name
    if name.startswith("(") or not hasattr(options, name):
        return
    value = option.value
    try:
        setattr(options, name, getattr(value, "name", value))
    except (TypeError, ValueError, AttributeError):
        return  # an enum-valued option given by name (optimize_for = SPEED): not needed


def _message(proto: descriptor_pb2.DescriptorProto, message: ast.Message, proto3: bool) -> None:
    proto.name = message.name
    _elements(proto, message, proto3)
    # proto3 `optional`: a synthetic oneof of its own per field, after every real oneof, as
    # protoc writes them (a descriptor pool refuses them before one).
    for field in proto.field:
        if field.proto3_optional:
            field.oneof_index = len(proto.oneof_decl)
            proto.oneof_decl.add(name=f"_{field.name}")


def _elements(proto: descriptor_pb2.DescriptorProto, message: ast.Message, proto3: bool) -> None:
    for element in message.elements:
        if isinstance(element, ast.Field):
            _field(proto.field.add(), element, proto3)
        elif isinstance(element, ast.MapField):
            _map_field(proto, element)
        elif isinstance(element, ast.OneOf):
            index = len(proto.oneof_decl)
            proto.oneof_decl.add(name=element.name)
            for member in element.elements:
                if isinstance(member, ast.Field):
                    field = proto.field.add()
                    _field(field, member, proto3)
                    field.oneof_index = index
        elif isinstance(element, ast.Message):
            _message(proto.nested_type.add(), element, proto3)
        elif isinstance(element, ast.Enum):
            _enum(proto.enum_type.add(), element)
        elif isinstance(element, ast.Reserved):
            _reserved(proto, element)
        elif isinstance(element, ast.Option):
            _option(proto.options, element)
        elif isinstance(element, ast.Group | ast.Extension):
            raise SchemaParseError(f"{type(element).__name__.lower()}s are not supported by this registry")


def _field(proto: Any, field: ast.Field, proto3: bool) -> None:
    proto.name = field.name
    proto.number = field.number
    proto.label = _LABELS[field.cardinality]
    _type(proto, field.type)
    for option in field.options:
        _option(proto.options, option)
    if proto3 and field.cardinality is ast.FieldCardinality.OPTIONAL:
        proto.proto3_optional = True  # its synthetic oneof is added with the message's last


def _type(proto: Any, name: str) -> None:
    if name in SCALARS:
        proto.type = SCALARS[name]
    else:
        proto.type_name = name  # resolved (message or enum) by the descriptor pool


def _map_field(message: descriptor_pb2.DescriptorProto, field: ast.MapField) -> None:
    entry = message.nested_type.add(
        name="".join(part.capitalize() for part in field.name.split("_")) + "Entry"
    )
    entry.options.map_entry = True
    key = entry.field.add(name="key", number=1, label=FieldProto.LABEL_OPTIONAL)
    _type(key, field.key_type)
    value = entry.field.add(name="value", number=2, label=FieldProto.LABEL_OPTIONAL)
    _type(value, field.value_type)
    proto = message.field.add(name=field.name, number=field.number, label=FieldProto.LABEL_REPEATED)
    proto.type_name = entry.name


def _enum(proto: descriptor_pb2.EnumDescriptorProto, enum: ast.Enum) -> None:
    proto.name = enum.name
    for element in enum.elements:
        if isinstance(element, ast.EnumValue):
            proto.value.add(name=element.name, number=element.number)
        elif isinstance(element, ast.Option):
            _option(proto.options, element)


def _reserved(message: descriptor_pb2.DescriptorProto, reserved: ast.Reserved) -> None:
    for text in reserved.ranges:
        low, _, high = str(text).partition(" to ")
        end = 536870912 if high.strip() == "max" else int(high or low) + 1
        message.reserved_range.add(start=int(low), end=end)
    message.reserved_name.extend(reserved.names)


def _service(proto: descriptor_pb2.ServiceDescriptorProto, service: ast.Service) -> None:
    proto.name = service.name
    for element in service.elements:
        if isinstance(element, ast.Method):
            method = proto.method.add(name=element.name)
            method.input_type = _type_name(element.input_type)
            method.output_type = _type_name(element.output_type)
            method.client_streaming = bool(getattr(element.input_type, "stream", False))
            method.server_streaming = bool(getattr(element.output_type, "stream", False))


def _type_name(message_type: Any) -> str:
    return str(getattr(message_type, "type", message_type))
