"""ListGroups: every group, classic, consumer and share (v4+ filtered by state, v5+ by type)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.protocol.messages.find_coordinator import GROUP_KEY_TYPE
from kafka_shim.protocol.messages.list_groups import API
from kafka_shim.shim.context import RequestContext
from kafka_shim.shim.security.authorizer import CLUSTER_NAME, AclOperation, ResourceType

if TYPE_CHECKING:  # the views exist for the type checker (protocol.viewgen)
    from kafka_shim.protocol.views.list_groups import ListGroupsRequestData

__all__ = ["API", "handle"]


async def handle(ctx: RequestContext, request: ListGroupsRequestData) -> dict[str, Any]:
    # Each broker lists the groups it coordinates (shim.testbroker.cluster), as in Kafka.
    listings = [
        g
        for g in ctx.broker.group_service.list_groups(request.states_filter, request.types_filter)
        if ctx.coordinates(GROUP_KEY_TYPE, g.group_id)
    ]
    # DESCRIBE on the cluster lists every group; else those the principal may describe, unlogged.
    describe = AclOperation.DESCRIBE
    if not ctx.authorized_names(describe, ResourceType.CLUSTER, (CLUSTER_NAME,), log_denied=False):
        visible = ctx.authorized_names(
            describe, ResourceType.GROUP, (g.group_id for g in listings), log_denied=False
        )
        listings = [g for g in listings if g.group_id in visible]
    return {
        "throttle_time_ms": 0,
        "error_code": ErrorCode.NONE,
        "groups": [
            {
                "group_id": g.group_id,
                "protocol_type": g.protocol_type,
                "group_state": g.state,
                "group_type": g.group_type,
            }
            for g in listings
        ],
    }
