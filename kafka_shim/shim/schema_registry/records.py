"""The `_schemas` topic's records, in Confluent Schema Registry's JSON (its storage package:
SchemaKey, SchemaValue, ConfigKey/Value, ModeKey/Value, DeleteSubjectKey/Value,
ClearSubjectKey/Value, NoopKey), so either registry can read the other's topic.

Keys are written byte for byte as Confluent's Jackson writes them (fields in its property
order, no spaces): compaction keeps the last record per key's bytes, so a key written here
replaces one written there. Values are read leniently (unknown fields ignored, as Jackson is
told to) and written with the fields Confluent writes."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

SCHEMA, CONFIG, MODE, DELETE_SUBJECT, CLEAR_SUBJECT, NOOP = (
    "SCHEMA",
    "CONFIG",
    "MODE",
    "DELETE_SUBJECT",
    "CLEAR_SUBJECT",
    "NOOP",
)
# Confluent's magic per key type: 1 for SCHEMA keys (the version field came with it), else 0.
_MAGIC = {SCHEMA: 1, CONFIG: 0, MODE: 0, DELETE_SUBJECT: 0, CLEAR_SUBJECT: 0, NOOP: 0}
AVRO = "AVRO"


def _compact(value: dict[str, Any]) -> bytes:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


@dataclass(frozen=True)
class Key:
    """A record key: its type, the subject (None: the registry-wide config or mode) and, for a
    SCHEMA key, the version."""

    keytype: str
    subject: str | None = None
    version: int | None = None

    def encode(self) -> bytes:
        fields: dict[str, Any] = {"keytype": self.keytype}
        if self.subject is not None or self.keytype == MODE:
            # ModeKey is not NON_EMPTY in Confluent: its null subject is written out.
            fields["subject"] = self.subject
        if self.keytype == SCHEMA:
            fields["version"] = self.version
        fields["magic"] = _MAGIC[self.keytype]
        return _compact(fields)


@dataclass(frozen=True)
class Reference:
    """A schema reference: the name the referring schema uses, and where the referred one is."""

    name: str
    subject: str
    version: int

    def as_json(self) -> dict[str, Any]:
        return {"name": self.name, "subject": self.subject, "version": self.version}


@dataclass(frozen=True)
class SchemaValue:
    subject: str
    version: int
    id: int
    schema: str
    schema_type: str = AVRO
    references: tuple[Reference, ...] = ()
    deleted: bool = False

    def encode(self) -> bytes:
        fields: dict[str, Any] = {"subject": self.subject, "version": self.version, "id": self.id}
        if self.schema_type != AVRO:  # Confluent leaves the default type out
            fields["schemaType"] = self.schema_type
        if self.references:
            fields["references"] = [reference.as_json() for reference in self.references]
        fields["schema"] = self.schema
        fields["deleted"] = self.deleted
        return _compact(fields)


class RecordError(ValueError):
    """A record of the topic that is not Confluent's JSON (skipped with a warning on read)."""


def decode_key(raw: bytes) -> Key:
    fields = _object(raw, "key")
    keytype = fields.get("keytype")
    if keytype not in _MAGIC:
        raise RecordError(f"unknown keytype {keytype!r}")
    subject = fields.get("subject")
    version = fields.get("version")
    if keytype == SCHEMA and (not isinstance(subject, str) or not isinstance(version, int)):
        raise RecordError("a SCHEMA key without its subject and version")
    return Key(keytype, subject if isinstance(subject, str) else None, version if keytype == SCHEMA else None)


def decode_schema(raw: bytes) -> SchemaValue:
    fields = _object(raw, "schema value")
    try:
        references = tuple(
            Reference(str(ref["name"]), str(ref["subject"]), int(ref["version"]))
            for ref in fields.get("references") or ()
        )
        return SchemaValue(
            subject=str(fields["subject"]),
            version=int(fields["version"]),
            id=int(fields["id"]),
            schema=str(fields["schema"]),
            schema_type=str(fields.get("schemaType") or AVRO),
            references=references,
            deleted=bool(fields.get("deleted", False)),
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise RecordError(f"schema value without {exc}") from exc


def decode_fields(raw: bytes) -> dict[str, Any]:
    """A CONFIG, MODE, DELETE_SUBJECT or CLEAR_SUBJECT value's fields."""
    return _object(raw, "value")


def config_value(subject: str | None, level: str) -> bytes:
    fields: dict[str, Any] = {} if subject is None else {"subject": subject}
    return _compact({**fields, "compatibilityLevel": level})


def mode_value(subject: str | None, mode: str) -> bytes:
    fields: dict[str, Any] = {} if subject is None else {"subject": subject}
    return _compact({**fields, "mode": mode})


def delete_subject_value(subject: str, version: int) -> bytes:
    return _compact({"subject": subject, "version": version})


def _object(raw: bytes, what: str) -> dict[str, Any]:
    try:
        fields = json.loads(raw)
    except (UnicodeDecodeError, ValueError) as exc:
        raise RecordError(f"{what} is not JSON: {exc}") from exc
    if not isinstance(fields, dict):
        raise RecordError(f"{what} is not a JSON object")
    return fields
