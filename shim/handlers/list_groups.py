"""ListGroups: every group, classic, consumer and share (v4+ filtered by state, v5+ by type)."""

from __future__ import annotations

from typing import Any

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.protocol.messages.list_groups import API
from kafka_shim.shim.authorizer import CLUSTER_NAME, AclOperation, ResourceType
from kafka_shim.shim.cluster import GROUP_KEY
from kafka_shim.shim.context import RequestContext
from kafka_shim.shim.coordinator import GroupListing

__all__ = ["API", "handle"]


async def handle(ctx: RequestContext, request: Any) -> dict[str, Any]:
    broker = ctx.broker
    consumer_groups = {g.group_id: g for g in broker.consumer_groups.groups()}
    # A consumer group's offsets sit in an empty classic entry of the same id: not a group of its own.
    # Each broker lists the groups it coordinates (shim.cluster), as in Kafka.
    listings = [
        g
        for g in broker.groups.list_groups(request.states_filter, request.types_filter)
        if g.group_id not in consumer_groups and ctx.coordinates(GROUP_KEY, g.group_id)
    ]
    states = {s.lower() for s in request.states_filter}
    if not request.types_filter or "consumer" in {t.lower() for t in request.types_filter}:
        listings += [
            GroupListing(g.group_id, "consumer", g.state.value, "consumer")
            for g in consumer_groups.values()
            if (not states or g.state.value.lower() in states) and ctx.coordinates(GROUP_KEY, g.group_id)
        ]
    if not request.types_filter or "share" in {t.lower() for t in request.types_filter}:
        listings += [
            GroupListing(g.group_id, "share", g.state.value, "share")
            for g in broker.share_groups.groups()
            if (not states or g.state.value.lower() in states) and ctx.coordinates(GROUP_KEY, g.group_id)
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
