"""protocol.viewgen: the typed views in protocol/views/ are what the declarations generate, and
what they promise holds for requests as the codec parses them."""

from __future__ import annotations

import importlib
import types
import typing
import uuid
from collections.abc import Mapping

from kafka_shim.protocol import viewgen
from kafka_shim.protocol.messages import APIS_BY_MODULE


def test_the_views_are_generated_from_the_declarations() -> None:
    expected = viewgen.expected_files()
    present = {path.name: path.read_text() for path in viewgen.VIEWS.glob("*.py")}
    stale = sorted(name for name in expected if present.get(name) != expected[name])
    extra = sorted(set(present) - set(expected))
    assert (stale, extra) == ([], []), "run `python -m kafka_shim.protocol.viewgen`"


def test_a_parsed_request_reads_as_its_view_says() -> None:
    # Fields outside the parsed version hold their defaults: a v0 Fetch has a topic name and
    # the zero topic id, its absent rack_id the empty string, its absent replica_state None.
    message = APIS_BY_MODULE["fetch"].request
    body = {"max_wait_ms": 5, "min_bytes": 1, "topics": [{"topic": "t", "partitions": [{"partition": 0}]}]}
    parsed = message.parse(message.build(body, 0), 0)
    assert parsed.topics[0].topic == "t" and isinstance(parsed.topics[0].topic_id, uuid.UUID)
    assert parsed.rack_id == "" and parsed.replica_state is None and parsed.cluster_id is None


def _allows(hint: object, value: object) -> bool:
    kinds = typing.get_args(hint) if isinstance(hint, types.UnionType) else (hint,)
    return any(value is None if kind is type(None) else isinstance(value, _runtime(kind)) for kind in kinds)


def _runtime(kind: typing.Any) -> type:
    """What a parsed value of a view's type is at run time: a struct's view is a Parsed mapping."""
    origin = typing.get_origin(kind) or kind
    return Mapping if getattr(origin, "_is_protocol", False) else origin  # type: ignore[no-any-return]


def test_every_field_of_every_version_holds_what_its_view_declares() -> None:
    # A request built from nothing (every field at its default) and parsed back, at every
    # version: a None where the view has no `| None` would be a lie to the type checker.
    wrong = []
    for module, api in APIS_BY_MODULE.items():
        views = importlib.import_module(f"kafka_shim.protocol.views.{module}")
        view = getattr(views, viewgen.view_name(api))
        hints = {
            name: typing.get_type_hints(field.fget)["return"]
            for name, field in vars(view).items()
            if isinstance(field, property)
        }
        message = api.request
        for version in range(message.versions.low, message.versions.high + 1):
            parsed = message.parse(message.build({}, version), version)
            wrong += [
                f"{api.name} v{version} {name}={value!r}"
                for name, value in parsed.items()
                if not _allows(hints[name], value)
            ]
    assert wrong == []
