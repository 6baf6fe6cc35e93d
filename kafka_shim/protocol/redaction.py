"""What a recording may hold of a request or answer: its parsed body with the values of
sensitive fields hidden by "[hidden]", as Kafka's request logger hides a password config's
value (Password.HIDDEN).

What is sensitive is declared once, on the schema field (`Field(..., sensitive=...)`,
protocol.schema.Sensitive: SASL tokens, SCRAM salts and salted passwords, config values) and,
for config values, on the config key (protocol.settings.config_value_hidden: PASSWORD-type
keys). Every recorder (the request recording and its trace file, the DEBUG request log)
passes bodies through `redacted`; the bodies handlers see are never changed. Record payloads
are not sensitive: showing what an application sent is what a recording is for.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kafka_shim.protocol.schema import Field, Message, Parsed, Sensitive
from kafka_shim.protocol.settings import config_value_hidden

HIDDEN = "[hidden]"  # Kafka's Password.HIDDEN
_TOPIC_RESOURCE = 2  # where no enclosing resource_type says otherwise (CreateTopics' configs)

# Per declared message and field (keyed by identity: declarations live as long as the
# process), whether it or anything inside it is sensitive: a body without such fields is returned untouched.
_holds_sensitive: dict[int, bool] = {}


def holds_sensitive(message: Message) -> bool:
    """Whether any field of `message` may be hidden (cheap after the first call)."""
    known = _holds_sensitive.get(id(message))
    if known is None:
        known = _holds_sensitive[id(message)] = any(_sensitive_inside(field) for field in message.fields)
    return known


def redacted(message: Message, body: Any) -> Any:
    """`body` (a parsed request or an answer, of `message`) with its sensitive values hidden:
    a copy of what contains one, the same object where nothing does."""
    if not isinstance(body, Mapping) or not holds_sensitive(message):
        return body
    return _struct(message.fields, body, _TOPIC_RESOURCE)


def _sensitive_inside(field: Field) -> bool:
    known = _holds_sensitive.get(id(field))
    if known is None:
        known = field.sensitive is not Sensitive.NO or any(
            _sensitive_inside(inner) for inner in field.inner_fields()
        )
        _holds_sensitive[id(field)] = known
    return known


def _struct(fields: list[Field], value: Any, resource_type: int) -> Any:
    if not isinstance(value, Mapping):
        return value
    resource_type = value.get("resource_type", resource_type)
    copy: Parsed | None = None
    for field in fields:
        if not _sensitive_inside(field) or field.name not in value:
            continue
        item = value[field.name]
        hidden = _field(field, item, value, resource_type)
        if hidden is not item:
            if copy is None:
                copy = Parsed(value)
            copy[field.name] = hidden
    return value if copy is None else copy


def _field(field: Field, item: Any, owner: Mapping[str, Any], resource_type: int) -> Any:
    if item is None:
        return None
    if field.sensitive is Sensitive.CREDENTIAL:
        return HIDDEN
    if field.sensitive is Sensitive.CONFIG_VALUE:
        return HIDDEN if config_value_hidden(resource_type, owner.get("name")) else item
    inner = field.inner_fields()
    if isinstance(item, list | tuple):
        changed = [_struct(inner, each, resource_type) for each in item]
        return item if all(new is old for new, old in zip(changed, item, strict=True)) else changed
    return _struct(inner, item, resource_type)
