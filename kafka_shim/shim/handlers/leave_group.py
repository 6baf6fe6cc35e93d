"""LeaveGroup: v0-2 name one member; v3+ a batch, static members possibly by instance id alone."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.protocol.messages.find_coordinator import GROUP_KEY_TYPE
from kafka_shim.protocol.messages.leave_group import API
from kafka_shim.shim.context import RequestContext
from kafka_shim.shim.coordinator.types import MemberIdentity
from kafka_shim.shim.security.authorizer import AclOperation, ResourceType

if TYPE_CHECKING:  # the views exist for the type checker (protocol.viewgen)
    from kafka_shim.protocol.views.leave_group import LeaveGroupRequestData

__all__ = ["API", "handle"]


async def handle(ctx: RequestContext, request: LeaveGroupRequestData) -> dict[str, Any]:
    denial = ctx.denial(AclOperation.READ, ResourceType.GROUP, request.group_id)
    if denial is not None:
        return {"throttle_time_ms": 0, "error_code": denial, "members": []}
    if not ctx.coordinates(GROUP_KEY_TYPE, request.group_id):
        return {"throttle_time_ms": 0, "error_code": ErrorCode.NOT_COORDINATOR, "members": []}
    if ctx.api_version >= 3:
        leaving = [MemberIdentity(m.member_id, m.group_instance_id, m.reason) for m in request.members]
    else:
        leaving = [MemberIdentity(request.member_id)]
    result = ctx.broker.group_service.leave(request.group_id, leaving, ctx.now_ms())
    error = result.error
    if ctx.api_version < 3 and error == ErrorCode.NONE:
        # Single-member versions carry the member's own error at the top level.
        error = next((e for _, e in result.members if e != ErrorCode.NONE), ErrorCode.NONE)
    return {
        "throttle_time_ms": 0,
        "error_code": error,
        "members": [
            {"member_id": m.member_id, "group_instance_id": m.group_instance_id, "error_code": e}
            for m, e in result.members
        ],
    }
