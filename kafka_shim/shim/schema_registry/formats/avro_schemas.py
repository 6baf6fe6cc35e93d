"""Avro schemas through Apache's `avro` package: its parser, and its reader/writer compatibility
checker (avro.compatibility, the port of Java Avro's SchemaCompatibility that Confluent's
AvroSchema.isBackwardCompatible calls)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import avro.errors
import avro.name
import avro.schema
from avro.compatibility import ReaderWriterCompatibilityChecker, SchemaCompatibilityType

from kafka_shim.shim.schema_registry.formats import AVRO, SchemaParseError


class AvroParsed:
    schema_type = AVRO

    def __init__(self, schema: avro.schema.Schema, text: str) -> None:
        self.schema = schema
        self.text = text

    def canonical(self) -> str:
        # The schema as the parser read it, keys sorted: whitespace and key order aside, every
        # attribute (docs, defaults, aliases) counts, as Confluent's AvroSchema.equals does.
        return json.dumps(self.schema.to_json(), sort_keys=True, separators=(",", ":"))

    def incompatibilities(self, writer: Any) -> list[str]:
        result = ReaderWriterCompatibilityChecker().get_compatibility(self.schema, writer.schema)
        if result.compatibility is SchemaCompatibilityType.compatible:
            return []
        reasons = [kind.name.upper() for kind in result.incompatibilities]
        locations = sorted(result.locations)
        messages = sorted(str(message) for message in result.messages)
        return [f"{', '.join(reasons)} at {', '.join(locations)}: {', '.join(messages)}"]

    def stored(self, given: str) -> str:
        return given  # as the client sent it

    def formatted(self, fmt: str | None) -> str | None:
        return None  # Avro has one format; Confluent ignores ?format= for it


def parse(text: str, dependencies: Sequence[tuple[str, str]]) -> AvroParsed:
    names = avro.name.Names()
    try:
        for _, dependency in dependencies:
            avro.schema.make_avsc_object(json.loads(dependency), names)
        return AvroParsed(avro.schema.make_avsc_object(json.loads(text), names), text)
    except ValueError as exc:  # JSONDecodeError is one
        raise SchemaParseError(f"not JSON: {exc}") from exc
    except (avro.errors.AvroException, TypeError, AttributeError, KeyError) as exc:
        raise SchemaParseError(str(exc) or type(exc).__name__) from exc
