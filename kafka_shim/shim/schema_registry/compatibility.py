"""Confluent's compatibility levels: which earlier versions a new schema is checked against,
and in which direction (Confluent's CompatibilityChecker). BACKWARD: the new schema reads
what the earlier wrote; FORWARD: the earlier reads what the new writes; FULL: both. Without
_TRANSITIVE only the latest live version counts, with it every live version."""

from __future__ import annotations

from collections.abc import Sequence

from kafka_shim.shim.schema_registry.formats import ParsedSchema

NONE = "NONE"
LEVELS = (
    "NONE",
    "BACKWARD",
    "BACKWARD_TRANSITIVE",
    "FORWARD",
    "FORWARD_TRANSITIVE",
    "FULL",
    "FULL_TRANSITIVE",
)
DEFAULT_LEVEL = "BACKWARD"  # Confluent's schema.compatibility.level default


def normalized_level(text: object) -> str | None:
    """The level `text` names (any case, as Confluent's CompatibilityLevel.forName), or None."""
    if not isinstance(text, str):
        return None
    level = text.strip().upper()
    return level if level in LEVELS else None


def incompatibilities(level: str, new: ParsedSchema, earlier: Sequence[ParsedSchema]) -> list[str]:
    """Why `new` may not follow `earlier` (oldest first) under `level` ([]: it may)."""
    if level == NONE or not earlier:
        return []
    checked = earlier if level.endswith("_TRANSITIVE") else earlier[-1:]
    messages: list[str] = []
    for previous in reversed(checked):  # the latest first, as Confluent reports
        if level.startswith(("BACKWARD", "FULL")):
            messages += [
                f"reading what an earlier version wrote: {m}" for m in new.incompatibilities(previous)
            ]
        if level.startswith(("FORWARD", "FULL")):
            messages += [
                f"an earlier version reading what this one writes: {m}"
                for m in previous.incompatibilities(new)
            ]
    return messages
