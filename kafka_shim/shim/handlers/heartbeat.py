"""Heartbeat: keeps a member's session alive; its error tells of rebalances and fencing (a
classic member of a consumer group hears REBALANCE_IN_PROGRESS when it must rejoin)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.protocol.messages.find_coordinator import GROUP_KEY_TYPE
from kafka_shim.protocol.messages.heartbeat import API
from kafka_shim.shim.context import RequestContext
from kafka_shim.shim.coordinator.types import HeartbeatRequest
from kafka_shim.shim.security.authorizer import AclOperation, ResourceType

if TYPE_CHECKING:  # the views exist for the type checker (protocol.viewgen)
    from kafka_shim.protocol.views.heartbeat import HeartbeatRequestData

__all__ = ["API", "handle"]


async def handle(ctx: RequestContext, request: HeartbeatRequestData) -> dict[str, Any]:
    denial = ctx.denial(AclOperation.READ, ResourceType.GROUP, request.group_id)
    if denial is not None:
        return {"throttle_time_ms": 0, "error_code": denial}
    if not ctx.coordinates(GROUP_KEY_TYPE, request.group_id):
        return {"throttle_time_ms": 0, "error_code": ErrorCode.NOT_COORDINATOR}
    beat = HeartbeatRequest(
        request.group_id, request.generation_id, request.member_id, request.group_instance_id
    )
    error = ctx.broker.group_service.heartbeat(beat, ctx.now_ms())
    return {"throttle_time_ms": 0, "error_code": error}
