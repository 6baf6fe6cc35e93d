"""DeleteGroups: empty groups are deleted with their offsets; others are refused. A KIP-848
consumer group's own records go too (its offsets are the classic coordinator's); an empty
share group goes with its share partitions' state (tombstones in __share_group_state, written
before the group's own)."""

from __future__ import annotations

from functools import partial
from typing import Any

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.protocol.messages.delete_groups import API
from kafka_shim.protocol.views.delete_groups import DeleteGroupsRequestData
from kafka_shim.shim.context import RequestContext
from kafka_shim.shim.security.authorizer import AclOperation, ResourceType
from kafka_shim.shim.share.requests import state_written
from kafka_shim.shim.testbroker.cluster import GROUP_KEY

__all__ = ["API", "handle"]


def _delete_share_group(ctx: RequestContext, group_id: str) -> ErrorCode:
    """Its share state first, then the group, as Kafka 4.1/4.2's GroupCoordinatorService.deleteGroups
    (deleteShareGroups: the persister's deleteState; a group whose state was not deleted is
    answered the persister's error and left out of the group deletion): a state write that
    fails leaves the group, empty, to be deleted again."""
    share_groups, share_partitions = ctx.broker.share_groups, ctx.broker.share_partitions
    refusal = share_groups.delete_refusal(group_id)
    if refusal != ErrorCode.NONE:
        return refusal
    keys = [key for key, _ in share_partitions.of_group(group_id)]
    written = state_written(partial(share_partitions.delete, keys, ctx.now_ms()))
    if written != ErrorCode.NONE:
        return written
    return ctx.broker.apply_or(share_groups.delete(group_id), ErrorCode)


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
        if g in deletable and not ctx.coordinates(GROUP_KEY, g)
    )
    allowed = [g for g in request.groups_names if g not in refused]
    results = broker.group_service.delete_groups(allowed, ctx.now_ms(), partial(_delete_share_group, ctx))
    return {
        "throttle_time_ms": 0,
        "results": [{"group_id": g, "error_code": e} for g, e in (results | refused).items()],
    }
