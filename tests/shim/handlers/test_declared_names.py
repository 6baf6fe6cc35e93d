"""The names a request's fields declare (protocol.schema.Names) and the checks its handler's
authorization row makes (shim.security.authorization.RULES) agree: a row that refuses the
topics, groups or transactional ids a request names has fields declaring them."""

from __future__ import annotations

from kafka_shim.protocol.messages import APIS_BY_MODULE
from kafka_shim.protocol.schema import Array, Field, Names, Struct
from kafka_shim.shim.security.authorization import RULES, Scope
from kafka_shim.shim.security.authorizer import ResourceType

# The marks that can name a resource of each type.
DECLARING = {
    ResourceType.TOPIC: {Names.TOPIC, Names.CONFIG_RESOURCE},
    ResourceType.GROUP: {Names.GROUP, Names.COORDINATOR_KEY, Names.CONFIG_RESOURCE},
    ResourceType.TRANSACTIONAL_ID: {Names.TRANSACTIONAL_ID, Names.COORDINATOR_KEY},
}


def _marks(fields: list[Field]) -> set[Names]:
    found = set()
    for f in fields:
        found.add(f.names)
        kind = f.type.element if isinstance(f.type, Array) else f.type
        if isinstance(kind, Struct):
            found |= _marks(kind.fields)
    return found


def test_every_refused_resource_is_declared_by_the_request() -> None:
    undeclared = [
        f"{module}: {check.operation.name} {check.resource.name}"
        for module, rule in RULES.items()
        for check in rule.checks
        if check.resource in DECLARING
        and check.scope in (Scope.REQUEST, Scope.EACH)
        and not DECLARING[check.resource] & _marks(APIS_BY_MODULE[module].request.fields)
    ]
    assert undeclared == []
