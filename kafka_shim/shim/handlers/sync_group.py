"""SyncGroup: the leader's assignment in, each member's own assignment out (possibly later).
A classic member of a consumer group gets the assignment the broker computed for it."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.protocol.messages.find_coordinator import GROUP_KEY_TYPE
from kafka_shim.protocol.messages.sync_group import API
from kafka_shim.shim.context import RequestContext
from kafka_shim.shim.coordinator.types import SyncRequest, SyncResult
from kafka_shim.shim.security.authorizer import AclOperation, ResourceType

if TYPE_CHECKING:  # the views exist for the type checker (protocol.viewgen)
    from kafka_shim.protocol.views.sync_group import SyncGroupRequestData

__all__ = ["API", "handle"]


async def handle(ctx: RequestContext, request: SyncGroupRequestData) -> dict[str, Any]:
    version = ctx.api_version
    if version >= 5 and (request.protocol_type is None or request.protocol_name is None):
        # From v5 both are mandatory, as Kafka's request validation has it (before authorization).
        result = SyncResult(ErrorCode.INCONSISTENT_GROUP_PROTOCOL)
    elif denial := ctx.denial(AclOperation.READ, ResourceType.GROUP, request.group_id):
        result = SyncResult(denial)
    elif not ctx.coordinates(GROUP_KEY_TYPE, request.group_id):
        result = SyncResult(ErrorCode.NOT_COORDINATOR)
    else:
        sync = SyncRequest(
            group_id=request.group_id,
            generation_id=request.generation_id,
            member_id=request.member_id,
            group_instance_id=request.group_instance_id,
            protocol_type=request.protocol_type,
            protocol_name=request.protocol_name,
            assignments={a.member_id: bytes(a.assignment) for a in request.assignments},
        )
        result = await ctx.broker.group_service.sync(ctx, sync)
    return {
        "throttle_time_ms": 0,
        "error_code": result.error,
        "protocol_type": result.protocol_type,
        "protocol_name": result.protocol_name,
        "assignment": result.assignment,
    }
