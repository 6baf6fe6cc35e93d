"""The operations of Confluent Schema Registry's API over the store: what each endpoint reads,
decides and writes, with Confluent's answers and errors. The HTTP layer (app) only parses the
request and authorizes it; everything a client sees is decided here."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from kafka_shim.shim.schema_registry import compatibility, errors, formats, records
from kafka_shim.shim.schema_registry.formats import ParsedSchema, SchemaParseError
from kafka_shim.shim.schema_registry.records import Key, Reference, SchemaValue
from kafka_shim.shim.schema_registry.state import RegistryState
from kafka_shim.shim.schema_registry.store import SchemaStore

READWRITE, READONLY, IMPORT = "READWRITE", "READONLY", "IMPORT"
MODES = (READWRITE, READONLY, "READONLY_OVERRIDE", IMPORT)
MAX_VERSION = 2**31 - 1
LATEST = -1


def parse_version(text: str) -> int:
    """A version path segment: 1..2^31-1, or "latest" (-1, as Confluent also takes it)."""
    if text == "latest":
        return LATEST
    try:
        version = int(text)
    except ValueError:
        raise errors.invalid_version(text) from None
    if version == LATEST:
        return LATEST
    if not 1 <= version <= MAX_VERSION:
        raise errors.invalid_version(text)
    return version


def schema_json(
    value: SchemaValue, *, with_subject: bool = True, schema: str | None = None
) -> dict[str, Any]:
    """A version as Confluent's Schema entity answers it (type and references left out when
    they are the defaults, as its NON_EMPTY Jackson setting does)."""
    body: dict[str, Any] = {"subject": value.subject, "version": value.version} if with_subject else {}
    body["id"] = value.id
    if value.schema_type != records.AVRO:
        body["schemaType"] = value.schema_type
    if value.references:
        body["references"] = [reference.as_json() for reference in value.references]
    body["schema"] = value.schema if schema is None else schema
    return body


class Registry:
    def __init__(self, store: SchemaStore, default_level: str = compatibility.DEFAULT_LEVEL) -> None:
        self.store = store
        self.default_level = default_level
        self._parsed: dict[tuple[str, str, tuple[Reference, ...]], ParsedSchema] = {}
        # The canonical text of each parsed schema: a registration compares it with every id's.
        self._canonical: dict[tuple[str, str, tuple[Reference, ...]], str] = {}

    @property
    def state(self) -> RegistryState:
        return self.store.catch_up()

    # -- parsing ---------------------------------------------------------------------------

    def _dependencies(
        self, references: Sequence[Reference], seen: set[tuple[str, int]]
    ) -> list[tuple[str, str]]:
        """Every schema `references` reach, referenced ones first, as (name, text)."""
        found: list[tuple[str, str]] = []
        for reference in references:
            if (reference.subject, reference.version) in seen:
                continue
            seen.add((reference.subject, reference.version))
            value = self.state.subjects.get(reference.subject, {}).get(reference.version)
            if value is None:
                where = f"no version {reference.version} of subject {reference.subject!r}"
                raise errors.invalid_schema(f"reference {reference.name}: {where}")
            found += self._dependencies(value.references, seen)
            found.append((reference.name, value.schema))
        return found

    def parsed(self, schema_type: str, text: str, references: tuple[Reference, ...]) -> ParsedSchema:
        key = (schema_type, text, references)
        known = self._parsed.get(key)
        if known is None:
            try:
                known = formats.parse(schema_type, text, self._dependencies(references, set()))
            except SchemaParseError as exc:
                raise errors.invalid_schema(f"of type {schema_type}: {exc}") from exc
            if len(self._parsed) > 10_000:  # bounded: a registry of more re-parses some
                self._parsed.clear()
                self._canonical.clear()
            self._parsed[key] = known
        return known

    def parsed_value(self, value: SchemaValue) -> ParsedSchema:
        return self.parsed(value.schema_type, value.schema, value.references)

    def identity(self, value: SchemaValue) -> tuple[str, str, tuple[Reference, ...]]:
        """What makes two registrations the same schema: type, canonical form, references."""
        key = (value.schema_type, value.schema, value.references)
        canonical = self._canonical.get(key)
        if canonical is None:
            canonical = self._canonical[key] = self.parsed(*key).canonical()
        return (value.schema_type, canonical, value.references)

    # -- reads -----------------------------------------------------------------------------

    def subjects(self, prefix: str = "", *, deleted: bool = False, deleted_only: bool = False) -> list[str]:
        state = self.state
        if deleted_only:
            live = set(state.live_subjects())
            names = [s for s in state.live_subjects(deleted=True) if s not in live or _has_deleted(state, s)]
        else:
            names = state.live_subjects(deleted=deleted)
        return [name for name in names if name.startswith(prefix)]

    def versions_of(self, subject: str, *, deleted: bool = False) -> list[SchemaValue]:
        found = self.state.versions(subject, deleted=deleted)
        if not found:
            raise errors.subject_not_found(subject)
        return found

    def version(self, subject: str, version: int, *, deleted: bool = False) -> SchemaValue:
        """A version of `subject` (LATEST: its newest live one), with Confluent's 40401/40402."""
        found = self.versions_of(subject, deleted=deleted or version != LATEST)
        if version == LATEST:
            return found[-1]
        value = next((v for v in found if v.version == version), None)
        if value is None or (value.deleted and not deleted):
            raise errors.version_not_found(subject, version)
        return value

    def by_id(self, schema_id: int, subject: str | None = None) -> SchemaValue:
        state = self.state
        values = list(state.holders(schema_id, deleted=True))
        if subject:
            values = [v for v in values if v.subject == subject] or values
        if not values:
            raise errors.schema_not_found(f"Schema {schema_id} not found")
        return values[0]

    def schema_by_id(self, schema_id: int, subject: str | None, fmt: str | None) -> dict[str, Any]:
        value = self.by_id(schema_id, subject)
        text = self.parsed_value(value).formatted(fmt) if fmt else None
        return _without_id(schema_json(value, with_subject=False, schema=text))

    def id_holders(self, schema_id: int, *, deleted: bool = False) -> list[SchemaValue]:
        self.by_id(schema_id)  # 40403 for an id no version holds
        return list(self.state.holders(schema_id, deleted=deleted))

    def all_schemas(self, prefix: str, *, deleted: bool, latest_only: bool) -> list[SchemaValue]:
        state = self.state
        found: list[SchemaValue] = []
        for subject in state.live_subjects(deleted=deleted):
            if subject.startswith(prefix):
                versions = state.versions(subject, deleted=deleted)
                found += versions[-1:] if latest_only else versions
        return found

    def referenced_by(self, subject: str, version: int) -> list[int]:
        value = self.version(subject, version, deleted=version != LATEST)
        state = self.state
        return sorted(
            {
                other.id
                for versions in state.subjects.values()
                for other in versions.values()
                if not other.deleted
                and any(r.subject == value.subject and r.version == value.version for r in other.references)
            }
        )

    def level(self, subject: str | None) -> str:
        state = self.state
        return (subject and state.config(subject)) or state.config(None) or self.default_level

    def mode(self, subject: str | None) -> str:
        state = self.state
        return (subject and state.mode(subject)) or state.mode(None) or READWRITE

    def lookup(self, subject: str, body: Any, *, deleted: bool) -> dict[str, Any]:
        """POST /subjects/{subject}: the version of `subject` holding the schema in `body`."""
        versions = self.versions_of(subject, deleted=deleted)
        request = SchemaRequest.of(body)
        wanted = (request.schema_type, self.parsed(*request.parsing).canonical(), request.references)
        for value in reversed(versions):
            if value.schema_type == request.schema_type and self.identity(value) == wanted:
                return schema_json(value)
        raise errors.schema_not_found("Schema not found")

    def check(self, subject: str, version: int | None, body: Any) -> list[str]:
        """POST /compatibility/...: why the schema in `body` may not follow `version` (None or
        LATEST: the versions the subject's level checks against)."""
        request = SchemaRequest.of(body)
        new = self.parsed(*request.parsing)
        level = self.level(subject)
        if version is None or version == LATEST:
            earlier = self.state.versions(subject)
        else:
            earlier = [self.version(subject, version)]
        parsed = [self.parsed_value(v) for v in earlier if v.schema_type == request.schema_type]
        if len(parsed) < len(earlier):
            return [f"the schema type changed from {earlier[-1].schema_type} to {request.schema_type}"]
        if version not in (None, LATEST) and level.endswith("_TRANSITIVE"):
            level = level.removesuffix("_TRANSITIVE")
        return compatibility.incompatibilities(level, new, parsed)


def _has_deleted(state: RegistryState, subject: str) -> bool:
    return any(value.deleted for value in state.subjects.get(subject, {}).values())


def _without_id(body: dict[str, Any]) -> dict[str, Any]:
    body.pop("id", None)
    return body


class SchemaRequest:
    """The body of a register, lookup or compatibility request, checked field by field."""

    def __init__(
        self,
        schema: str,
        schema_type: str,
        references: tuple[Reference, ...],
        schema_id: int | None,
        version: int | None,
    ) -> None:
        self.schema = schema
        self.schema_type = schema_type
        self.references = references
        self.schema_id = schema_id
        self.version = version

    @property
    def parsing(self) -> tuple[str, str, tuple[Reference, ...]]:
        return (self.schema_type, self.schema, self.references)

    @classmethod
    def of(cls, body: Any) -> SchemaRequest:
        if not isinstance(body, dict):
            raise errors.unprocessable("the body must be a JSON object with a schema")
        schema = body.get("schema")
        if not isinstance(schema, str) or not schema.strip():
            raise errors.invalid_schema("Empty schema")
        schema_type = body.get("schemaType") or records.AVRO
        if schema_type not in formats.SCHEMA_TYPES:
            raise errors.unprocessable(
                f"Unknown schema type {schema_type!r}: one of {', '.join(formats.SCHEMA_TYPES)}"
            )
        for contract in ("metadata", "ruleSet"):
            if body.get(contract):
                raise errors.unprocessable(
                    f"{contract}: data contracts (metadata, rule sets) are not served by this registry"
                )
        return cls(
            schema,
            schema_type,
            _references(body.get("references")),
            _optional_int(body, "id", 0),
            _optional_int(body, "version", 1),
        )


def _references(raw: Any) -> tuple[Reference, ...]:
    if raw in (None, []):
        return ()
    if not isinstance(raw, list):
        raise errors.unprocessable("references must be a list")
    found = []
    for item in raw:
        if (
            not isinstance(item, dict)
            or not isinstance(item.get("name"), str)
            or not isinstance(item.get("subject"), str)
            or not isinstance(item.get("version"), int)
        ):
            raise errors.unprocessable("each reference needs a name, a subject and a version (an integer)")
        found.append(Reference(item["name"], item["subject"], item["version"]))
    return tuple(found)


def _optional_int(body: dict[str, Any], name: str, minimum: int) -> int | None:
    value = body.get(name)
    if value is None or value == -1:
        return None
    if not isinstance(value, int) or isinstance(value, bool) or not minimum <= value <= MAX_VERSION:
        raise errors.unprocessable(f"{name} must be an integer from {minimum} to {MAX_VERSION}")
    return value


def schema_key(subject: str, version: int) -> bytes:
    return Key(records.SCHEMA, subject, version).encode()
