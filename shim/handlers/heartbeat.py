"""Heartbeat: keeps a member's session alive; its error tells of rebalances and fencing."""

from __future__ import annotations

from typing import Any

from protocol.messages.heartbeat import API
from shim.context import RequestContext
from shim.coordinator import HeartbeatRequest

__all__ = ["API", "handle"]


async def handle(ctx: RequestContext, request: Any) -> dict[str, Any]:
    beat = HeartbeatRequest(
        request.group_id, request.generation_id, request.member_id, request.group_instance_id
    )
    return {"throttle_time_ms": 0, "error_code": ctx.broker.groups.heartbeat(beat, ctx.now_ms())}
