"""JoinGroup: hand the request to the group service and wait for its (possibly delayed) answer.

A JoinGroup for a consumer group with members makes a classic member of it (KIP-848's
online migration), answered at once; for an empty consumer group the group becomes classic
(its offsets stay); a share group is GROUP_ID_NOT_FOUND (shim.groups.service)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.protocol.messages.find_coordinator import GROUP_KEY_TYPE
from kafka_shim.protocol.messages.join_group import API
from kafka_shim.shim.context import RequestContext
from kafka_shim.shim.coordinator.types import JoinRequest, Protocol
from kafka_shim.shim.security.authorizer import AclOperation, ResourceType

if TYPE_CHECKING:  # the views exist for the type checker (protocol.viewgen)
    from kafka_shim.protocol.views.join_group import JoinGroupRequestData

__all__ = ["API", "handle"]


def client_host(ctx: RequestContext) -> str:
    return f"/{ctx.client_host}"  # Kafka reports hosts as Java's InetAddress prints them


def _refused(version: int, code: ErrorCode) -> dict[str, Any]:
    return {
        "throttle_time_ms": 0,
        "error_code": code,
        "generation_id": -1,
        "protocol_name": None if version >= 7 else "",
        "leader": "",
        "member_id": "",
        "members": [],
    }


async def handle(ctx: RequestContext, request: JoinGroupRequestData) -> dict[str, Any]:
    version = ctx.api_version
    denial = ctx.denial(AclOperation.READ, ResourceType.GROUP, request.group_id)
    if denial is not None:
        return _refused(version, denial)
    if not ctx.coordinates(GROUP_KEY_TYPE, request.group_id):
        return _refused(version, ErrorCode.NOT_COORDINATOR)
    join = JoinRequest(
        group_id=request.group_id,
        member_id=request.member_id,
        session_timeout_ms=request.session_timeout_ms,
        # v0 has no rebalance timeout: the session timeout serves for both.
        rebalance_timeout_ms=request.rebalance_timeout_ms if version >= 1 else request.session_timeout_ms,
        protocol_type=request.protocol_type,
        protocols=tuple(Protocol(p.name, bytes(p.metadata)) for p in request.protocols),
        group_instance_id=request.group_instance_id,
        client_id=ctx.client_id or "",
        client_host=client_host(ctx),
        require_known_member_id=version >= 4,
        supports_skip_assignment=version >= 9,
        reason=request.reason,
    )
    result = await ctx.broker.group_service.join(ctx, join)
    return {
        "throttle_time_ms": 0,
        "error_code": result.error,
        "generation_id": result.generation_id,
        "protocol_type": result.protocol_type,
        # Nullable only from v7; before that "no protocol" is the empty string.
        "protocol_name": result.protocol_name if version >= 7 else result.protocol_name or "",
        "leader": result.leader,
        "skip_assignment": result.skip_assignment,
        "member_id": result.member_id,
        "members": [
            {"member_id": m.member_id, "group_instance_id": m.group_instance_id, "metadata": m.metadata}
            for m in result.members
        ],
    }
