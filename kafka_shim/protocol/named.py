"""What a request names: its topics (with the partitions it names of each), groups and
transactional ids, read from the `names` marks of its declaration (protocol.schema.Names).

Fault rules and recording queries match requests by what they name (shim.testbroker.faults);
they read it here, so a newly declared API is matched as soon as its fields say what they
name, and no reader guesses from field names. Only the fields present in the request's
version are read: a field outside its versions holds its default, which names nothing.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from kafka_shim.protocol.messages.describe_configs import ResourceType as ConfigResourceType
from kafka_shim.protocol.messages.find_coordinator import GROUP_KEY_TYPE, TRANSACTION_KEY_TYPE
from kafka_shim.protocol.schema import Field, Message, Names

# A topic id's name, or None for an id this broker does not know.
TopicNames = Callable[[uuid.UUID], str | None]

_KEY_NAMES = {GROUP_KEY_TYPE: Names.GROUP, TRANSACTION_KEY_TYPE: Names.TRANSACTIONAL_ID}


@dataclass
class Named:
    """What one request names."""

    groups: set[str] = field(default_factory=set)
    transactional_ids: set[str] = field(default_factory=set)
    # Topic name -> the partitions the request names of it (empty: the topic as a whole).
    partitions: dict[str, set[int]] = field(default_factory=dict)

    def add(self, names: Names, value: str) -> None:
        if names is Names.GROUP:
            self.groups.add(value)
        elif names is Names.TRANSACTIONAL_ID:
            self.transactional_ids.add(value)


def named(message: Message, version: int, body: Mapping[str, Any], topic_names: TopicNames) -> Named:
    """What `body` (a request of `message` at `version`, parsed or shaped like one) names."""
    found = Named()
    key_names = _KEY_NAMES.get(body.get("key_type", GROUP_KEY_TYPE), Names.NOTHING)
    _struct(message.fields, version, body, _Scope(found, topic_names, key_names), None)
    return found


class _Scope:
    __slots__ = ("found", "key_names", "topic_names")

    def __init__(self, found: Named, topic_names: TopicNames, key_names: Names) -> None:
        self.found = found
        self.topic_names = topic_names
        self.key_names = key_names  # what FindCoordinator's keys name

    def topic(self, value: Any) -> str | None:
        if isinstance(value, uuid.UUID):
            return self.topic_names(value)
        return value if isinstance(value, str) and value else None


# One struct's fields at one version that name something or hold something that does, as
# (name, what it names, the fields of its elements): derived once per struct and version.
_Plan = tuple[tuple[str, Names, list[Field]], ...]
_plans: dict[tuple[int, int], _Plan] = {}


def _plan(fields: list[Field], version: int) -> _Plan:
    key = (id(fields), version)
    plan = _plans.get(key)
    if plan is None:
        plan = _plans[key] = tuple(
            (f.name, f.names, f.inner_fields()) for f in fields if version in f.versions and _marked(f)
        )
    return plan


def _struct(
    fields: list[Field], version: int, value: Any, scope: _Scope, partitions: set[int] | None
) -> None:
    """Collect what one struct names; `partitions` are its enclosing topic's, if one names it."""
    if not isinstance(value, Mapping):
        return
    plan = [(name, names, inner) for name, names, inner in _plan(fields, version) if name in value]
    named_topics = [value[name] for name, names, _ in plan if names is Names.TOPIC]
    for item in named_topics:  # a struct naming one topic scopes the partitions inside it
        if isinstance(item, list | tuple):
            for each in item:
                name = scope.topic(each)
                if name is not None:
                    scope.found.partitions.setdefault(name, set())
    own = next((n for item in named_topics if (n := scope.topic(item)) is not None), None)
    if own is not None:
        partitions = scope.found.partitions.setdefault(own, set())
    elif any(not isinstance(item, list | tuple) for item in named_topics):
        partitions = None  # a topic this broker does not know: its partitions name nothing
    for name, names, inner in plan:
        item = value[name]
        if names is Names.PARTITION:
            if partitions is not None:
                partitions.update(i for i in _items(item) if isinstance(i, int))
        elif names is Names.CONFIG_RESOURCE:
            _config_resource(value.get("resource_type"), item, scope.found)
        elif names is Names.COORDINATOR_KEY:
            for key in _items(item):
                if isinstance(key, str) and key:
                    scope.found.add(scope.key_names, key)
        elif names in (Names.GROUP, Names.TRANSACTIONAL_ID):
            for text in _items(item):
                if isinstance(text, str):
                    scope.found.add(names, text)
        elif names is Names.NOTHING:
            for element in _items(item):
                _struct(inner, version, element, scope, partitions)


def _config_resource(resource_type: Any, name: Any, found: Named) -> None:
    if not isinstance(name, str) or not name:
        return  # "" names the cluster default of a broker config
    if resource_type == ConfigResourceType.TOPIC:
        found.partitions.setdefault(name, set())
    elif resource_type == ConfigResourceType.GROUP:
        found.groups.add(name)


def _items(item: Any) -> Iterable[Any]:
    if item is None:
        return ()
    return item if isinstance(item, list | tuple) else (item,)


# Per declared field (keyed by identity: declarations live as long as the process), whether it
# or anything inside it names something: the rest (record batches, configs) is never walked.
_marked_fields: dict[int, bool] = {}


def _marked(f: Field) -> bool:
    known = _marked_fields.get(id(f))
    if known is None:
        known = f.names is not Names.NOTHING or any(_marked(inner) for inner in f.inner_fields())
        _marked_fields[id(f)] = known
    return known
