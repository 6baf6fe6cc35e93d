"""The operations that write: register, delete, compatibility levels and modes. Each decides
on a caught-up state while holding the store's write lock, then writes its records and returns
once they are durable (shim.schema_registry.store), with Confluent's answers and errors."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from kafka_shim.shim.schema_registry import compatibility, errors, records
from kafka_shim.shim.schema_registry.records import Key, SchemaValue
from kafka_shim.shim.schema_registry.registry import (
    IMPORT,
    LATEST,
    MODES,
    READWRITE,
    Registry,
    SchemaRequest,
    schema_key,
)

READ_ONLY_MODES = ("READONLY", "READONLY_OVERRIDE")


def _writable(registry: Registry, subject: str | None) -> str:
    mode = registry.mode(subject)
    if mode in READ_ONLY_MODES:
        raise errors.operation_not_permitted(f"Subject {subject} is in read-only mode")
    return mode


async def register(registry: Registry, subject: str, body: Any) -> dict[str, Any]:
    """POST /subjects/{subject}/versions: the schema's id, registering it as the subject's
    next version if it is not one of its live versions already."""
    request = SchemaRequest.of(body)
    async with registry.store.write_lock:
        mode = _writable(registry, subject)
        if request.schema_id is not None and mode != IMPORT:
            raise errors.operation_not_permitted(
                f"Subject {subject} is not in import mode: only IMPORT mode registers a schema with an id"
            )
        new = registry.parsed(*request.parsing)
        identity = (request.schema_type, new.canonical(), request.references)
        state = registry.state
        every = state.versions(subject, deleted=True)
        live = state.versions(subject)
        for value in reversed(live):
            if registry.identity(value) == identity and request.schema_id in (None, value.id):
                return {"id": value.id}
        schema_id = _id_for(registry, request, identity)
        if mode != IMPORT:
            messages = _type_change(live, request.schema_type)
            if not messages:
                earlier = [registry.parsed_value(v) for v in live]
                messages = compatibility.incompatibilities(registry.level(subject), new, earlier)
            if messages:
                raise errors.incompatible(subject, messages)
        version = request.version or (every[-1].version + 1 if every else 1)
        if any(v.version == version for v in every):
            raise errors.id_conflict(f"Version {version} of subject {subject} is taken")
        text = new.stored(request.schema)
        value = SchemaValue(subject, version, schema_id, text, request.schema_type, request.references)
        await registry.store.write([(schema_key(subject, version), value.encode())])
    return {"id": schema_id}


def _type_change(live: list[SchemaValue], schema_type: str) -> list[str]:
    if live and live[-1].schema_type != schema_type:
        return [f"the schema type changed from {live[-1].schema_type} to {schema_type}"]
    return []


def _id_for(registry: Registry, request: SchemaRequest, identity: tuple[Any, ...]) -> int:
    """The id the schema has under any subject already; else a new one (IMPORT: the one
    given, if no other schema holds it)."""
    state = registry.state
    for schema_id in sorted(state.ids):
        holder = state.by_id(schema_id)
        if (
            holder is not None
            and registry.identity(holder) == identity
            and request.schema_id in (None, schema_id)
        ):
            return schema_id
    if request.schema_id is not None:
        if request.schema_id in state.ids:
            raise errors.id_conflict(f"Schema id {request.schema_id} already holds another schema")
        return request.schema_id
    return state.max_id + 1


async def delete_version(registry: Registry, subject: str, version: int, permanent: bool) -> int:
    """DELETE /subjects/{subject}/versions/{version}: soft (marked deleted) or, once soft
    deleted, permanent (a tombstone)."""
    async with registry.store.write_lock:
        _writable(registry, subject)
        # "latest" is the newest live version; a number may name a soft-deleted one (40406).
        value = registry.version(subject, version, deleted=version != LATEST)
        if permanent and not value.deleted:
            raise errors.version_not_soft_deleted(subject, value.version)
        if not permanent and value.deleted:
            raise errors.version_soft_deleted(subject, value.version)
        referrers = registry.referenced_by(subject, value.version)
        if referrers:
            raise errors.references_exist(f"{subject} version {value.version}: referenced by ids {referrers}")
        key = schema_key(subject, value.version)
        if permanent:
            await registry.store.write([(key, None)])
        else:
            await registry.store.write([(key, replace(value, deleted=True).encode())])
    return value.version


async def delete_subject(registry: Registry, subject: str, permanent: bool) -> list[int]:
    """DELETE /subjects/{subject}: every version soft deleted (Confluent's DELETE_SUBJECT
    record), or, once they all are, removed (a tombstone each); its level and mode go too."""
    async with registry.store.write_lock:
        _writable(registry, subject)
        every = registry.versions_of(subject, deleted=True)
        live = [v for v in every if not v.deleted]
        if permanent and live:
            raise errors.subject_not_soft_deleted(subject)
        if not permanent and not live:
            raise errors.subject_soft_deleted(subject)
        for value in live:
            if registry.referenced_by(subject, value.version):
                raise errors.references_exist(f"{subject} version {value.version}")
        batch: list[tuple[bytes, bytes | None]]
        if permanent:
            batch = [(schema_key(subject, v.version), None) for v in every]
        else:
            batch = [
                (
                    Key(records.DELETE_SUBJECT, subject).encode(),
                    records.delete_subject_value(subject, live[-1].version),
                )
            ]
        state = registry.state
        if state.config(subject) is not None:
            batch.append((Key(records.CONFIG, subject).encode(), None))
        if state.mode(subject) is not None:
            batch.append((Key(records.MODE, subject).encode(), None))
        await registry.store.write(batch)
    return [v.version for v in (every if permanent else live)]


async def set_level(registry: Registry, subject: str | None, body: Any) -> dict[str, str]:
    """PUT /config[/{subject}] with {"compatibility": LEVEL}."""
    raw = body.get("compatibility", body.get("compatibilityLevel")) if isinstance(body, dict) else None
    level = compatibility.normalized_level(raw)
    if level is None:
        raise errors.invalid_compatibility_level(raw)
    async with registry.store.write_lock:
        _writable(registry, subject)
        await registry.store.write(
            [(Key(records.CONFIG, subject).encode(), records.config_value(subject, level))]
        )
    return {"compatibility": level}


async def delete_level(registry: Registry, subject: str | None) -> dict[str, str]:
    """DELETE /config[/{subject}]: back to the registry-wide level (or the default)."""
    async with registry.store.write_lock:
        _writable(registry, subject)
        if subject is not None:
            registry.versions_of(subject, deleted=True)  # 40401 for an unknown subject
        before = registry.level(subject)
        await registry.store.write([(Key(records.CONFIG, subject).encode(), None)])
    return {"compatibilityLevel": before}


async def set_mode(registry: Registry, subject: str | None, body: Any, force: bool) -> dict[str, str]:
    """PUT /mode[/{subject}] with {"mode": MODE}; IMPORT only where no schema is yet, unless
    forced (Confluent's rule: imported ids must not collide with registered ones)."""
    raw = body.get("mode") if isinstance(body, dict) else None
    mode = raw.strip().upper() if isinstance(raw, str) else None
    if mode not in MODES:
        raise errors.invalid_mode(raw)
    async with registry.store.write_lock:
        if mode == IMPORT and not force:
            state = registry.state
            taken = (
                state.versions(subject, deleted=True)
                if subject is not None
                else state.live_subjects(deleted=True)
            )
            if taken and registry.mode(subject) != IMPORT:
                raise errors.operation_not_permitted(
                    "Cannot import since found existing subjects (set ?force=true to import anyway)"
                )
        await registry.store.write([(Key(records.MODE, subject).encode(), records.mode_value(subject, mode))])
    return {"mode": mode}


async def delete_mode(registry: Registry, subject: str) -> dict[str, str]:
    async with registry.store.write_lock:
        registry.versions_of(subject, deleted=True)
        before = registry.mode(subject)
        await registry.store.write([(Key(records.MODE, subject).encode(), None)])
    return {"mode": before}


__all__ = ["LATEST", "READWRITE", "register"]
