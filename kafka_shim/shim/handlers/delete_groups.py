"""DeleteGroups: empty groups are deleted with their offsets; others are refused. A KIP-848
consumer group's own records go too (its offsets are the classic coordinator's); an empty
share group goes with its share partitions' state (tombstones in __share_group_state, written
before the group's own)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.protocol.messages.delete_groups import API
from kafka_shim.protocol.messages.find_coordinator import GROUP_KEY_TYPE
from kafka_shim.shim.context import RequestContext
from kafka_shim.shim.security.authorizer import AclOperation, ResourceType

if TYPE_CHECKING:  # the views exist for the type checker (protocol.viewgen)
    from kafka_shim.protocol.views.delete_groups import DeleteGroupsRequestData

__all__ = ["API", "handle"]


async def handle(ctx: RequestContext, request: DeleteGroupsRequestData) -> dict[str, Any]:
    broker = ctx.broker
    deletable = ctx.authorized_names(AclOperation.DELETE, ResourceType.GROUP, request.groups_names)
    refused = dict.fromkeys(
        (g for g in request.groups_names if g not in deletable),
        ctx.refusal(AclOperation.DELETE, ResourceType.GROUP),
    )
    refused.update(
        (g, ErrorCode.NOT_COORDINATOR)
        for g in request.groups_names
        if g in deletable and not ctx.coordinates(GROUP_KEY_TYPE, g)
    )
    allowed = [g for g in request.groups_names if g not in refused]
    results = broker.group_service.delete_groups(allowed, ctx.now_ms())
    return {
        "throttle_time_ms": 0,
        "results": [{"group_id": g, "error_code": e} for g, e in (results | refused).items()],
    }
