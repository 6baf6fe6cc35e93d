"""ConsumerGroupHeartbeat: KIP-848 members join, heartbeat, reconcile and leave.

A member joining (epoch 0) a classic group that has members upgrades it to a consumer group
(KIP-848's online migration; its classic members stay, see coordinator/consumer/classic.py)
when group.consumer.migration.policy and the group allow; otherwise, and for any other
heartbeat, a classic group is answered GROUP_ID_NOT_FOUND, as Kafka does. The coordinator's
records reach `__consumer_offsets` before the answer leaves.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.protocol.messages.consumer_group_heartbeat import API
from kafka_shim.protocol.messages.find_coordinator import GROUP_KEY_TYPE
from kafka_shim.shim.context import RequestContext
from kafka_shim.shim.controller.features import GROUP_VERSION
from kafka_shim.shim.coordinator.consumer import HeartbeatRequest, HeartbeatResponse
from kafka_shim.shim.coordinator.consumer.types import Assignment
from kafka_shim.shim.handlers.join_group import client_host
from kafka_shim.shim.security.authorizer import AclOperation, ResourceType

if TYPE_CHECKING:  # the views exist for the type checker (protocol.viewgen)
    from kafka_shim.protocol.views.consumer_group_heartbeat import ConsumerGroupHeartbeatRequestData

__all__ = ["API", "handle"]


def _assignment(assignment: Assignment) -> dict[str, Any]:
    return {
        "topic_partitions": [
            {"topic_id": topic_id, "partitions": sorted(parts)}
            for topic_id, parts in assignment.items()
            if parts
        ]
    }


async def handle(ctx: RequestContext, request: ConsumerGroupHeartbeatRequestData) -> dict[str, Any]:
    broker = ctx.broker
    if broker.features.level(GROUP_VERSION) < 1:
        answer = HeartbeatResponse(
            ErrorCode.UNSUPPORTED_VERSION,
            "The consumer group protocol is disabled (group.version 0: "
            "group.coordinator.rebalance.protocols or UpdateFeatures).",
        )
    elif denial := ctx.denial(AclOperation.READ, ResourceType.GROUP, request.group_id):
        answer = HeartbeatResponse(denial, None)
    elif not ctx.coordinates(GROUP_KEY_TYPE, request.group_id):
        answer = HeartbeatResponse(ErrorCode.NOT_COORDINATOR, None)
    else:
        answer = broker.group_service.consumer_heartbeat(_request(ctx, request), ctx.now_ms())
    return {
        "throttle_time_ms": 0,
        "error_code": answer.error,
        "error_message": answer.message,
        "member_id": answer.member_id,
        "member_epoch": answer.member_epoch,
        "heartbeat_interval_ms": answer.heartbeat_interval_ms,
        "assignment": None if answer.assignment is None else _assignment(answer.assignment),
    }


def _request(ctx: RequestContext, request: ConsumerGroupHeartbeatRequestData) -> HeartbeatRequest:
    owned = None
    if request.topic_partitions is not None:
        owned = {t.topic_id: frozenset(t.partitions) for t in request.topic_partitions if t.partitions}
    return HeartbeatRequest(
        group_id=request.group_id,
        member_id=request.member_id,
        member_epoch=request.member_epoch,
        instance_id=request.instance_id,
        rack_id=request.rack_id,
        rebalance_timeout_ms=request.rebalance_timeout_ms,
        subscribed_topic_names=(
            None if request.subscribed_topic_names is None else tuple(request.subscribed_topic_names)
        ),
        subscribed_topic_regex=request.subscribed_topic_regex,
        server_assignor=request.server_assignor,
        owned=owned,
        client_id=ctx.client_id or "",
        client_host=client_host(ctx),
        api_version=ctx.api_version,
    )
