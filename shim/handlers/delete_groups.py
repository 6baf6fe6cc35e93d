"""DeleteGroups: empty groups are deleted with their offsets; others are refused."""

from __future__ import annotations

from typing import Any

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.protocol.messages.delete_groups import API
from kafka_shim.shim.authorizer import AclOperation, ResourceType
from kafka_shim.shim.context import RequestContext

__all__ = ["API", "handle"]


async def handle(ctx: RequestContext, request: Any) -> dict[str, Any]:
    deletable = ctx.authorized_names(AclOperation.DELETE, ResourceType.GROUP, request.groups_names)
    allowed = [g for g in request.groups_names if g in deletable]
    results = ctx.broker.groups.delete_groups(allowed, ctx.now_ms()) if allowed else {}
    refused = dict.fromkeys(
        (g for g in request.groups_names if g not in deletable), ErrorCode.GROUP_AUTHORIZATION_FAILED
    )
    return {
        "throttle_time_ms": 0,
        "results": [{"group_id": g, "error_code": e} for g, e in (results | refused).items()],
    }
