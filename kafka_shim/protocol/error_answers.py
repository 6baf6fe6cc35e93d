"""A well-formed response carrying one error, derived from the schemas, for any API and version.

The test broker's fault rules answer a request with a Kafka error without running its handler.
Kafka puts an error where the API keeps it: per partition in Produce, Fetch and OffsetCommit,
per group in DescribeGroups and DeleteGroups, at the top in Heartbeat or JoinGroup. Rather than
one builder per API, the answer is derived from the response declaration: every array whose
elements carry an `error_code` mirrors the request's array at the same level (Produce's
`responses` mirror `topic_data`, their `partition_responses` mirror `partition_data`), its
elements naming the same topics, partitions or groups; the error goes into the deepest
`error_code`s so reached (or the top one, when asked or when nothing is mirrored). Other fields
hold what Kafka sends beside an error: -1 for offsets and timestamps (int64), empty records,
the request's own strings of the same name (member_id, group_id), defaults elsewhere.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from kafka_shim.protocol.api import Api
from kafka_shim.protocol.schema import INT64, RECORDS, STRING, UUID, Array, Field, Struct

# A response array and the request arrays it answers, where their names differ.
_ANSWERS = {
    "responses": ("topic_data", "topics"),
    "partition_responses": ("partition_data", "partitions"),
}
# A response key field and the request fields naming the same thing.
_SAME_KEY = {
    "name": ("name", "topic"),
    "topic": ("topic", "name"),
    "partition_index": ("partition_index", "partition", "index"),
    "index": ("index", "partition_index", "partition"),
    "partition": ("partition", "partition_index", "index"),
}
_COPIED_TYPES = (STRING, UUID)


class NoErrorField(ValueError):
    """The response of this API has no error code to carry a fault."""


def error_answer(api: Api, version: int, request: Mapping[str, Any], error: int, *, top: bool = False) -> Any:
    """The response of `api` at `version` to `request`, answering `error` where Kafka puts it
    (the top-level error code instead when `top`). Raises NoErrorField if the response has none."""
    slots: list[tuple[int, dict[str, Any]]] = []
    answer = _answer(api.response.fields, version, request, slots, 0)
    if not slots:
        raise NoErrorField(f"{api.name} v{version}: this request leaves its answer no error code to carry")
    deepest = max(depth for depth, _ in slots)
    level = 0 if top and any(depth == 0 for depth, _ in slots) else deepest
    for depth, entry in slots:
        if depth == level:
            entry["error_code"] = error
    return answer


def has_error_field(api: Api, version: int) -> bool:
    return _carries_error(api.response.fields, version)


def _answer(
    fields: Sequence[Field],
    version: int,
    request: Mapping[str, Any],
    slots: list[tuple[int, dict[str, Any]]],
    depth: int,
) -> dict[str, Any]:
    entry: dict[str, Any] = {}
    for field in fields:
        if version not in field.versions:
            continue
        kind = field.type
        if field.name == "error_code":
            slots.append((depth, entry))
        elif isinstance(kind, Array) and isinstance(kind.element, Struct):
            elements = kind.element.fields
            mirrored = _mirrored(field.name, request) if _carries_error(elements, version) else []
            entry[field.name] = [
                _answer(elements, version, _as_entry(elements, version, each), slots, depth + 1)
                for each in mirrored
            ]
        elif isinstance(kind, Struct) and version not in field.nullable and field.tag is None:
            entry[field.name] = _answer(kind.fields, version, {}, [], depth)  # its defaults, no error
        elif kind in _COPIED_TYPES or field.name in _SAME_KEY:
            for source in _SAME_KEY.get(field.name, (field.name,)):
                if source in request:
                    entry[field.name] = request[source]
                    break
        elif kind is INT64 and field.default_value() == 0:
            entry[field.name] = -1  # Kafka's INVALID_OFFSET / NO_TIMESTAMP beside an error
        elif kind is RECORDS:
            entry[field.name] = b""  # present but empty, never null
    return entry


def _carries_error(fields: Sequence[Field], version: int) -> bool:
    for field in fields:
        if version not in field.versions:
            continue
        if field.name == "error_code":
            return True
        kind = field.type
        if (
            isinstance(kind, Array)
            and isinstance(kind.element, Struct)
            and _carries_error(kind.element.fields, version)
        ):
            return True
    return False


def _mirrored(name: str, request: Mapping[str, Any]) -> list[Any]:
    """The request array a response array answers: the same name, a known counterpart, else
    the request's arrays together (AlterUserScramCredentials answers deletions and upsertions)."""
    for source in (name, *_ANSWERS.get(name, ())):
        value = request.get(source)
        if isinstance(value, list) and value:  # absent in this version: an empty default
            return value
    return [each for value in request.values() if isinstance(value, list) for each in value]


def _as_entry(fields: Sequence[Field], version: int, element: Any) -> Mapping[str, Any]:
    """A request element as a mapping: a bare name or index (DeleteGroups' group names) stands
    for the response element's first key field."""
    if isinstance(element, Mapping):
        return element
    for field in fields:
        if version in field.versions and field.name != "error_code":
            return {field.name: element}
    return {}
