"""The schema types Confluent's registry serves: AVRO, PROTOBUF and JSON. Each module parses
a schema (with the schemas it references, already parsed text first) into a `ParsedSchema`
and says what keeps a reader from reading a writer's data; each is imported on first use."""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from typing import Protocol

AVRO, PROTOBUF, JSON = "AVRO", "PROTOBUF", "JSON"
SCHEMA_TYPES = (JSON, PROTOBUF, AVRO)  # as Confluent's /schemas/types lists them
_MODULES = {
    AVRO: "kafka_shim.shim.schema_registry.formats.avro_schemas",
    PROTOBUF: "kafka_shim.shim.schema_registry.formats.protobuf_schemas",
    JSON: "kafka_shim.shim.schema_registry.formats.json_schemas",
}


class SchemaParseError(ValueError):
    """A schema that is not valid for its type (answered 42201)."""


class ParsedSchema(Protocol):
    schema_type: str

    def canonical(self) -> str:
        """What two registrations of the same schema have in common (whitespace, key order
        and the like aside): same canonical text and references, same id."""
        ...

    def incompatibilities(self, writer: ParsedSchema) -> list[str]:
        """Why this schema, as a reader, cannot read what `writer` wrote ([]: it can)."""
        ...

    def formatted(self, fmt: str | None) -> str | None:
        """The schema in the format a client asks for (`?format=`), None if it has none."""
        ...

    def stored(self, given: str) -> str:
        """The text to store for `given` (the request's): Confluent's canonical form where
        this registry writes one (a .proto file for a base64 descriptor), else `given`."""
        ...


class Dependency(Protocol):
    """A referenced schema, parsed: its name in the referring schema and its text."""

    name: str
    schema: str


def parse(schema_type: str, text: str, dependencies: Sequence[tuple[str, str]] = ()) -> ParsedSchema:
    """Parse `text` of `schema_type`; `dependencies` are (name, schema text) pairs of every
    schema it references, directly or not, those referenced first. SchemaParseError."""
    module = importlib.import_module(_MODULES[schema_type])
    parsed: ParsedSchema = module.parse(text, dependencies)
    return parsed
