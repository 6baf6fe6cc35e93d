"""JSON Schema schemas: valid per their draft's meta-schema (the `jsonschema` package's checks;
the draft from `$schema`, else the newest), compared per a documented subset of Confluent's
JsonSchema diff (its json.diff package).

Checks made, the writer's schema against the reader's, recursively through `properties`,
`items`, `additionalProperties` (a schema) and `$defs`/`definitions` by name:
TYPE_NARROWED (a type the writer allows that the reader does not; integer may widen to
number), ENUM_ARRAY_NARROWED, CONST_CHANGED, MAXIMUM/MAX_LENGTH/MAX_ITEMS/MAX_PROPERTIES
(and exclusiveMaximum) added or decreased, their MIN counterparts added or increased,
PATTERN_CHANGED, REQUIRED_ATTRIBUTE_ADDED, PROPERTY_ADDED_TO_OPEN_CONTENT_MODEL (a reader's new
property the writer's open object may already have written with any value),
PROPERTY_REMOVED_FROM_CLOSED_CONTENT_MODEL and ADDITIONAL_PROPERTIES_REMOVED (the reader closes
what the writer left open). Annotations (title, description, default, examples, format,
$comment, $id, $schema, readOnly, writeOnly, deprecated) are not compared. Any other keyword
(allOf, anyOf, oneOf, not, $ref, if/then/else, patternProperties, prefixItems, contains,
dependentRequired, ...) that differs is reported as a change not analysed here, so a change
this subset cannot judge is refused, saying so, rather than accepted unseen."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from typing import Any

import jsonschema
import jsonschema.validators

from kafka_shim.shim.schema_registry.formats import JSON, SchemaParseError

ANNOTATIONS = frozenset(
    {"title", "description", "default", "examples", "format", "$comment", "$id", "id", "$schema",
     "readOnly", "writeOnly", "deprecated", "$anchor", "contentMediaType", "contentEncoding"}
)  # fmt: skip
UPPER_BOUNDS = ("maximum", "exclusiveMaximum", "maxLength", "maxItems", "maxProperties")
LOWER_BOUNDS = ("minimum", "exclusiveMinimum", "minLength", "minItems", "minProperties")
COMPARED = frozenset(
    {"type", "enum", "const", "pattern", "required", "properties", "additionalProperties", "items",
     "$defs", "definitions", *UPPER_BOUNDS, *LOWER_BOUNDS}
)  # fmt: skip


class JsonParsed:
    schema_type = JSON

    def __init__(self, schema: Any) -> None:
        self.schema = schema

    def canonical(self) -> str:
        return json.dumps(self.schema, sort_keys=True, separators=(",", ":"))

    def stored(self, given: str) -> str:
        return given  # as the client sent it

    def formatted(self, fmt: str | None) -> str | None:
        return None

    def incompatibilities(self, writer: Any) -> list[str]:
        return list(_differences("#", writer.schema, self.schema))


def parse(text: str, dependencies: Sequence[tuple[str, str]]) -> JsonParsed:
    try:
        schema = json.loads(text)
    except ValueError as exc:
        raise SchemaParseError(f"not JSON: {exc}") from exc
    if not isinstance(schema, dict | bool):
        raise SchemaParseError("a JSON Schema is an object or a boolean")
    try:
        jsonschema.validators.validator_for(schema).check_schema(schema)
    except jsonschema.SchemaError as exc:
        raise SchemaParseError(
            f"{exc.message} at {'/'.join(map(str, exc.absolute_path)) or 'the root'}"
        ) from exc
    return JsonParsed(schema)


def _types(schema: dict[str, Any]) -> set[str] | None:
    declared = schema.get("type")
    if declared is None:
        return None
    return {declared} if isinstance(declared, str) else set(declared)


def _open(schema: dict[str, Any]) -> bool:
    return schema.get("additionalProperties", True) is not False


def _differences(at: str, writer: Any, reader: Any) -> Iterator[str]:
    if writer == reader or reader is True or reader == {} or writer is False:
        return
    if isinstance(writer, bool) or isinstance(reader, bool):
        yield f"SCHEMA_NARROWED at {at}: the reader accepts less than the writer's {json.dumps(writer)}"
        return
    yield from _value_differences(at, writer, reader)
    yield from _object_differences(at, writer, reader)
    if isinstance(writer.get("items"), dict | bool) and isinstance(reader.get("items"), dict | bool):
        yield from _differences(f"{at}/items", writer["items"], reader["items"])
    elif writer.get("items") != reader.get("items"):
        yield f"ITEMS_CHANGED at {at}: items (as a list of schemas) is not analysed here"
    for keyword in ("$defs", "definitions"):
        mine, theirs = writer.get(keyword) or {}, reader.get(keyword) or {}
        for name in sorted(set(mine) & set(theirs)):
            yield from _differences(f"{at}/{keyword}/{name}", mine[name], theirs[name])
    for keyword in sorted((set(writer) | set(reader)) - ANNOTATIONS - COMPARED):
        if writer.get(keyword) != reader.get(keyword):
            yield f"UNANALYSED_CHANGE at {at}: {keyword} changed, which this registry does not judge"


def _value_differences(at: str, writer: dict[str, Any], reader: dict[str, Any]) -> Iterator[str]:
    read, written = _types(reader), _types(writer)
    if read is not None:
        lost = (written or {"any type"}) - read - ({"integer"} if "number" in read else set())
        if lost:
            yield f"TYPE_NARROWED at {at}: {', '.join(sorted(lost))} no longer accepted"
    if "enum" in reader:
        values = {json.dumps(v, sort_keys=True) for v in reader["enum"]}
        if "enum" not in writer or {json.dumps(v, sort_keys=True) for v in writer["enum"]} - values:
            yield f"ENUM_ARRAY_NARROWED at {at}"
    if "const" in reader and reader["const"] != writer.get("const", object()):
        yield f"CONST_CHANGED at {at}"
    for keyword in UPPER_BOUNDS:
        if keyword in reader and (keyword not in writer or reader[keyword] < writer[keyword]):
            yield f"{_name(keyword)}_{'DECREASED' if keyword in writer else 'ADDED'} at {at}"
    for keyword in LOWER_BOUNDS:
        if keyword in reader and (keyword not in writer or reader[keyword] > writer[keyword]):
            yield f"{_name(keyword)}_{'INCREASED' if keyword in writer else 'ADDED'} at {at}"
    if "pattern" in reader and reader["pattern"] != writer.get("pattern"):
        yield f"PATTERN_{'CHANGED' if 'pattern' in writer else 'ADDED'} at {at}"


def _object_differences(at: str, writer: dict[str, Any], reader: dict[str, Any]) -> Iterator[str]:
    for name in sorted(set(reader.get("required", ())) - set(writer.get("required", ()))):
        yield f"REQUIRED_ATTRIBUTE_ADDED at {at}: {name}"
    written, read = writer.get("properties") or {}, reader.get("properties") or {}
    for name in sorted(set(written) & set(read)):
        yield from _differences(f"{at}/properties/{name}", written[name], read[name])
    if _open(writer):
        for name in sorted(set(read) - set(written)):
            yield f"PROPERTY_ADDED_TO_OPEN_CONTENT_MODEL at {at}: {name}"
    if not _open(reader):
        for name in sorted(set(written) - set(read)):
            yield f"PROPERTY_REMOVED_FROM_CLOSED_CONTENT_MODEL at {at}: {name}"
        if _open(writer):
            yield f"ADDITIONAL_PROPERTIES_REMOVED at {at}"
    extra_written, extra_read = writer.get("additionalProperties"), reader.get("additionalProperties")
    if isinstance(extra_written, dict) and isinstance(extra_read, dict):
        yield from _differences(f"{at}/additionalProperties", extra_written, extra_read)


def _name(keyword: str) -> str:
    return "".join(f"_{c}" if c.isupper() else c.upper() for c in keyword).lstrip("_")
