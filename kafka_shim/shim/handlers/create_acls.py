"""CreateAcls: add ACL bindings; each is refused alone (INVALID_REQUEST) or created, unless one
names a filter-only value, which fails the whole request as in Kafka 3.9 (nothing created)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.protocol.messages.create_acls import API
from kafka_shim.shim.context import RequestContext
from kafka_shim.shim.security.acl_requests import authorizer_for, binding, unwritten
from kafka_shim.shim.security.authorizer import AclOperation, AclRefusal

if TYPE_CHECKING:  # the views exist for the type checker (protocol.viewgen)
    from kafka_shim.protocol.views.create_acls import CreateAclsRequestData

__all__ = ["API", "handle"]


def _result(outcome: AclRefusal | None) -> dict[str, Any]:
    if outcome is None:
        return {"error_code": 0}  # error_message: the schema's default "", as Kafka leaves it
    return {"error_code": outcome.code, "error_message": outcome.message}


async def handle(ctx: RequestContext, request: CreateAclsRequestData) -> dict[str, Any]:
    bindings = [binding(creation) for creation in request.creations]
    authorizer = authorizer_for(ctx, AclOperation.ALTER, API.name)
    outcomes: list[AclRefusal | None]
    if isinstance(authorizer, AclRefusal):
        outcomes = [authorizer] * len(bindings)
    elif any(b.has_filter_only_value() for b in bindings):
        outcomes = [AclRefusal(ErrorCode.UNKNOWN_SERVER_ERROR, None)] * len(bindings)
    else:
        try:
            outcomes = authorizer.create(bindings)
        except OSError as exc:
            outcomes = [unwritten(exc)] * len(bindings)
    return {"throttle_time_ms": 0, "results": [_result(o) for o in outcomes]}
