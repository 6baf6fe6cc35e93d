"""DescribeAcls: the ACL bindings matching a filter, grouped by resource pattern."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.protocol.messages.describe_acls import API
from kafka_shim.shim.context import RequestContext
from kafka_shim.shim.security.acl_requests import acl_filter, authorizer_for
from kafka_shim.shim.security.authorizer import AclOperation, AclRefusal

if TYPE_CHECKING:  # the views exist for the type checker (protocol.viewgen)
    from kafka_shim.protocol.views.describe_acls import DescribeAclsRequestData

__all__ = ["API", "handle"]


async def handle(ctx: RequestContext, request: DescribeAclsRequestData) -> dict[str, Any]:
    matching = acl_filter(request)
    authorizer = authorizer_for(ctx, AclOperation.DESCRIBE, API.name)
    if isinstance(authorizer, AclRefusal):
        return {
            "throttle_time_ms": 0,
            "error_code": authorizer.code,
            "error_message": authorizer.message,
            "resources": [],
        }
    resources: dict[tuple[int, str, int], list[dict[str, Any]]] = {}
    for acl in authorizer.describe(matching):
        entry = {
            "principal": acl.principal,
            "host": acl.host,
            "operation": acl.operation,
            "permission_type": acl.permission,
        }
        resources.setdefault((acl.resource_type, acl.name, acl.pattern_type), []).append(entry)
    return {
        "throttle_time_ms": 0,
        "error_code": ErrorCode.NONE,
        "resources": [
            {"resource_type": kind, "resource_name": name, "pattern_type": pattern, "acls": acls}
            for (kind, name, pattern), acls in resources.items()
        ],
    }
