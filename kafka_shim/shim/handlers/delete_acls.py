"""DeleteAcls: remove the ACL bindings matching each filter, reporting them per filter."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.protocol.messages.delete_acls import API
from kafka_shim.shim.context import RequestContext
from kafka_shim.shim.security.acl_requests import acl_filter, authorizer_for, binding_fields, unwritten
from kafka_shim.shim.security.authorizer import AclBinding, AclOperation, AclRefusal

if TYPE_CHECKING:  # the views exist for the type checker (protocol.viewgen)
    from kafka_shim.protocol.views.delete_acls import DeleteAclsRequestData

__all__ = ["API", "handle"]


def _result(outcome: AclRefusal | list[AclBinding]) -> dict[str, Any]:
    if isinstance(outcome, AclRefusal):
        return {"error_code": outcome.code, "error_message": outcome.message, "matching_acls": []}
    return {
        "error_code": ErrorCode.NONE,
        "error_message": None,
        "matching_acls": [
            {"error_code": ErrorCode.NONE, "error_message": None, **binding_fields(acl)} for acl in outcome
        ],
    }


async def handle(ctx: RequestContext, request: DeleteAclsRequestData) -> dict[str, Any]:
    filters = [acl_filter(f) for f in request.filters]
    authorizer = authorizer_for(ctx, AclOperation.ALTER, API.name)
    outcomes: list[AclRefusal | list[AclBinding]]
    if isinstance(authorizer, AclRefusal):
        outcomes = [authorizer] * len(filters)
    else:
        try:
            outcomes = authorizer.delete(filters)
        except OSError as exc:
            outcomes = [unwritten(exc)] * len(filters)
    return {"throttle_time_ms": 0, "filter_results": [_result(o) for o in outcomes]}
