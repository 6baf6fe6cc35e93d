"""ShareGroupHeartbeat: KIP-932 share-group members join, heartbeat and leave.

The group service answers (groups.service.GroupService.share_heartbeat): a group id that names
a classic or consumer group is GROUP_ID_NOT_FOUND ("not a share group"), as Kafka answers; the
manager's records reach `__consumer_offsets` before the answer leaves (NOT_COORDINATOR if they
cannot, as Kafka's GroupCoordinatorService answers a failed append; the group stays as the log
has it).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.protocol.messages.find_coordinator import GROUP_KEY_TYPE
from kafka_shim.protocol.messages.share_group_heartbeat import API
from kafka_shim.shim.context import RequestContext
from kafka_shim.shim.coordinator.share.manager import ShareHeartbeat, ShareHeartbeatAnswer
from kafka_shim.shim.handlers.join_group import client_host
from kafka_shim.shim.security.authorizer import AclOperation, ResourceType
from kafka_shim.shim.share.requests import DISABLED, share_groups_enabled

if TYPE_CHECKING:  # the views exist for the type checker (protocol.viewgen)
    from kafka_shim.protocol.views.share_group_heartbeat import ShareGroupHeartbeatRequestData

__all__ = ["API", "handle"]


async def handle(ctx: RequestContext, request: ShareGroupHeartbeatRequestData) -> dict[str, Any]:
    if not share_groups_enabled(ctx):
        answer = ShareHeartbeatAnswer(ErrorCode.UNSUPPORTED_VERSION, DISABLED)
    elif not ctx.authorize(AclOperation.READ, ResourceType.GROUP, request.group_id):
        answer = ShareHeartbeatAnswer(ctx.refusal(AclOperation.READ, ResourceType.GROUP))
    elif not ctx.coordinates(GROUP_KEY_TYPE, request.group_id):
        answer = ShareHeartbeatAnswer(ErrorCode.NOT_COORDINATOR)
    else:
        beat = ShareHeartbeat(
            group_id=request.group_id,
            member_id=request.member_id,
            member_epoch=request.member_epoch,
            rack_id=request.rack_id,
            subscribed_topic_names=(
                None if request.subscribed_topic_names is None else tuple(request.subscribed_topic_names)
            ),
            client_id=ctx.client_id or "",
            client_host=client_host(ctx),
        )
        answer = ctx.broker.group_service.share_heartbeat(beat, ctx.now_ms())
    return {
        "throttle_time_ms": 0,
        "error_code": answer.error,
        "error_message": answer.message,
        "member_id": answer.member_id,
        "member_epoch": answer.member_epoch,
        "heartbeat_interval_ms": answer.heartbeat_interval_ms,
        "assignment": None
        if answer.assignment is None
        else {
            "topic_partitions": [
                {"topic_id": topic_id, "partitions": sorted(parts)}
                for topic_id, parts in sorted(answer.assignment.items())
            ]
        },
    }
