"""DeleteGroups: empty groups are deleted with their offsets; others are refused."""

from __future__ import annotations

from typing import Any

from kafka_shim.protocol.messages.delete_groups import API
from kafka_shim.shim.context import RequestContext

__all__ = ["API", "handle"]


async def handle(ctx: RequestContext, request: Any) -> dict[str, Any]:
    results = ctx.broker.groups.delete_groups(request.groups_names, ctx.now_ms())
    return {
        "throttle_time_ms": 0,
        "results": [{"group_id": g, "error_code": e} for g, e in results.items()],
    }
