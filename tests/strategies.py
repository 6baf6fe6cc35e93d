"""Hypothesis strategies derived from the message declarations themselves."""

from __future__ import annotations

import uuid
from typing import Any

from hypothesis import strategies as st

from kafka_shim.protocol import schema as s

_INT_BOUNDS = {
    "int8": (-(2**7), 2**7 - 1),
    "int16": (-(2**15), 2**15 - 1),
    "uint16": (0, 2**16 - 1),
    "int32": (-(2**31), 2**31 - 1),
    "int64": (-(2**63), 2**63 - 1),
}

# Small names collide often, which drives handlers through their
# "already exists" / "same group" paths instead of always creating new state.
_NAMES = st.sampled_from(["", "a", "t", "g", "topic-1", "__consumer_offsets", "x" * 300])


def _interesting_ints(low: int, high: int) -> st.SearchStrategy[int]:
    edges = [v for v in (low, high, -1, 0, 1, 2, 3) if low <= v <= high]
    return st.one_of(st.sampled_from(edges), st.integers(low, high))


def value_for(
    field_type: s.FieldType, version: int, nullable: bool, *, partial: bool = False
) -> st.SearchStrategy[Any]:
    strategy: st.SearchStrategy[Any]
    if isinstance(field_type, s.Primitive):
        name = field_type.name
        if name in _INT_BOUNDS:
            strategy = _interesting_ints(*_INT_BOUNDS[name])
        elif name == "bool":
            strategy = st.booleans()
        elif name == "float64":
            strategy = st.floats(allow_nan=False)
        elif name == "uuid":
            strategy = st.one_of(st.just(uuid.UUID(int=0)), st.uuids())
        else:
            raise AssertionError(f"no strategy for {name}")
    elif isinstance(field_type, s.SizedType):
        if field_type.name == "string":
            strategy = st.one_of(_NAMES, st.text(max_size=20))
        else:
            strategy = st.binary(max_size=64)
    elif isinstance(field_type, s.Array):
        element = field_type.element
        strategy = st.lists(value_for(element, version, False, partial=partial), max_size=3)
    elif isinstance(field_type, s.Struct):
        strategy = struct_values(field_type.fields, version, partial=partial)
    else:
        raise AssertionError(f"no strategy for {field_type!r}")
    return st.one_of(st.none(), strategy) if nullable else strategy


def struct_values(
    fields: list[s.Field], version: int, *, partial: bool = False
) -> st.SearchStrategy[dict[str, Any]]:
    """A mapping for every field of `version`; with `partial`, any of them may be left
    out (building must then fill its default)."""
    values = {
        f.name: value_for(f.type, version, version in f.nullable, partial=partial)
        for f in fields
        if version in f.versions
    }
    if partial:
        return st.fixed_dictionaries({}, optional=values)
    return st.fixed_dictionaries(values)


def message_values(
    message: s.Message, version: int, *, partial: bool = False
) -> st.SearchStrategy[dict[str, Any]]:
    return struct_values(message.fields, version, partial=partial)


def project(fields: list[s.Field], value: dict[str, Any], version: int) -> dict[str, Any]:
    """What parsing `value` built at `version` must yield: absent fields hold defaults."""
    out: dict[str, Any] = {}
    for f in fields:
        if version not in f.versions:
            out[f.name] = f.default_value()
            continue
        item = value[f.name]
        if isinstance(f.type, s.Array) and isinstance(f.type.element, s.Struct) and item is not None:
            item = [project(f.type.element.fields, element, version) for element in item]
        out[f.name] = item
    return out
