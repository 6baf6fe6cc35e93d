"""JoinGroup: hand the request to the coordinator and wait for its (possibly delayed) answer.

A JoinGroup for a consumer group with members makes a classic member of it (KIP-848's
online migration), answered at once by the consumer-group coordinator; for an empty
consumer group the group becomes classic (its offsets stay)."""

from __future__ import annotations

from typing import Any

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.protocol.messages.join_group import API
from kafka_shim.shim.authorizer import AclOperation, ResourceType
from kafka_shim.shim.cluster import GROUP_KEY
from kafka_shim.shim.context import RequestContext
from kafka_shim.shim.coordinator import JoinRequest, JoinResult, Protocol

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


async def handle(ctx: RequestContext, request: Any) -> dict[str, Any]:
    version = ctx.api_version
    denial = ctx.denial(AclOperation.READ, ResourceType.GROUP, request.group_id)
    if denial is not None:
        return _refused(version, denial)
    if not ctx.coordinates(GROUP_KEY, request.group_id):
        return _refused(version, ErrorCode.NOT_COORDINATOR)
    broker = ctx.broker
    if broker.group_type(request.group_id) == "share":
        return _refused(version, ErrorCode.GROUP_ID_NOT_FOUND)  # Kafka: "... is not a classic group."
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
    consumer_group = broker.consumer_groups.group(request.group_id)
    result: JoinResult
    if consumer_group is not None and consumer_group.members:
        if not broker.groups.config.allows_session_timeout(join.session_timeout_ms):
            result = JoinResult(ErrorCode.INVALID_SESSION_TIMEOUT, join.member_id)
        else:
            result = broker.apply_or(
                broker.consumer_groups.classic_join(join, broker.consumer_topics, ctx.now_ms()),
                lambda code: JoinResult(code, join.member_id),
            )
    elif (
        consumer_group is not None  # empty: it becomes classic, once its tombstones are written
        and (deleted := broker.apply_or(broker.consumer_groups.delete_empty(request.group_id), ErrorCode))
        != ErrorCode.NONE
    ):
        result = JoinResult(deleted, join.member_id)
    else:
        result = await ctx.deferred(
            lambda respond: broker.start_waiting(
                lambda waiter: broker.groups.join_group(join, ctx.now_ms(), waiter),
                respond,
                lambda code: JoinResult(code, join.member_id),
                journal=(join.group_id, "JoinGroup", join.member_id),
            )
        )
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
