"""The console's view of the registry (its Schemas page): subjects with their latest version,
type and level; a subject's versions, each schema pretty-printed, and the line diff between two
versions. Read from the `_schemas` topic through a store of the console's own, so the page
shows the same whether or not the registry's listener is served."""

from __future__ import annotations

import difflib
import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from kafka_shim.shim.schema_registry.records import SchemaValue
from kafka_shim.shim.schema_registry.registry import Registry
from kafka_shim.shim.schema_registry.store import SchemaStore

if TYPE_CHECKING:
    from kafka_shim.shim.broker import Broker


class NoSuchSubject(LookupError):
    pass


def console_registry(broker: Broker) -> Registry:
    config = broker.config
    return Registry(
        SchemaStore(broker, config.schema_registry_topic), config.schema_registry_compatibility_level
    )


def pretty(value: SchemaValue) -> str:
    """Avro and JSON Schema indented, one key a line, so a diff shows what changed; Protobuf as
    registered (a .proto file, or the base64 descriptor confluent-kafka sends)."""
    try:
        return json.dumps(json.loads(value.schema), indent=2)
    except ValueError:
        return value.schema


def subjects(registry: Registry, shown: Callable[[str], bool]) -> list[dict[str, Any]]:
    state = registry.state
    rows = []
    for subject in state.live_subjects(deleted=True):
        if not shown(subject):
            continue
        every = state.versions(subject, deleted=True)
        live = [v for v in every if not v.deleted]
        latest = (live or every)[-1]
        rows.append(
            {
                "subject": subject,
                "versions": len(live),
                "latest_version": latest.version,
                "latest_id": latest.id,
                "schema_type": latest.schema_type,
                "level": registry.level(subject),
                "deleted": not live,
            }
        )
    return rows


def subject(registry: Registry, name: str, older: int | None, newer: int | None) -> dict[str, Any]:
    """A subject's versions, and the diff from version `older` to `newer` (by default the
    two newest)."""
    every = registry.state.versions(name, deleted=True)
    if not every:
        raise NoSuchSubject(f"no subject {name}")
    by_version = {v.version: v for v in every}
    newer = newer if newer in by_version else every[-1].version
    older = older if older in by_version else (every[-2].version if len(every) > 1 else newer)
    diff = difflib.unified_diff(
        pretty(by_version[older]).splitlines(),
        pretty(by_version[newer]).splitlines(),
        f"version {older}",
        f"version {newer}",
        lineterm="",
    )
    return {
        "subject": name,
        "level": registry.level(name),
        "mode": registry.mode(name),
        "versions": [
            {
                "version": v.version,
                "id": v.id,
                "schema_type": v.schema_type,
                "deleted": v.deleted,
                "references": [r.as_json() for r in v.references],
                "schema": pretty(v),
            }
            for v in every
        ],
        "diff": {"from": older, "to": newer, "lines": list(diff)},
    }
