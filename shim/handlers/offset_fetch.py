"""OffsetFetch: committed offsets of one group (v0-7) or several (v8+).

A null topic list (v2+) asks for every partition the group committed.
"""

from __future__ import annotations

from typing import Any

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.protocol.messages.offset_fetch import API
from kafka_shim.shim.context import RequestContext
from kafka_shim.shim.coordinator import FetchedOffset, GroupCoordinator, TopicPartition
from kafka_shim.shim.coordinator.types import by_topic

__all__ = ["API", "handle"]


def _fetch_group(
    groups: GroupCoordinator, group_id: str, topics: list[Any] | None, require_stable: bool
) -> list[dict[str, Any]]:
    partitions = (
        None
        if topics is None
        else [TopicPartition(t.name, index) for t in topics for index in t.partition_indexes]
    )
    fetched = groups.fetch_offsets(group_id, partitions, require_stable)
    return [{"name": name, "partitions": _partitions(entries)} for name, entries in by_topic(fetched).items()]


def _partitions(entries: list[tuple[int, FetchedOffset]]) -> list[dict[str, Any]]:
    return [
        {
            "partition_index": index,
            "committed_offset": offset.offset,
            "committed_leader_epoch": offset.leader_epoch,
            "metadata": offset.metadata,
            "error_code": offset.error,
        }
        for index, offset in entries
    ]


def _member_error(ctx: RequestContext, group_id: str, member_id: str | None, member_epoch: int) -> ErrorCode:
    """v9+ members of a KIP-848 group name themselves and are fenced by member epoch."""
    consumer_groups = ctx.broker.consumer_groups
    if consumer_groups.group(group_id) is None:
        return ErrorCode.NONE
    return consumer_groups.validate_fetch(group_id, member_id, member_epoch) or ErrorCode.NONE


async def handle(ctx: RequestContext, request: Any) -> dict[str, Any]:
    groups = ctx.broker.groups
    if ctx.api_version >= 8:
        answers = []
        for g in request.groups:
            error = _member_error(ctx, g.group_id, g.member_id, g.member_epoch)
            topics = [] if error else _fetch_group(groups, g.group_id, g.topics, request.require_stable)
            answers.append({"group_id": g.group_id, "topics": topics, "error_code": error})
        return {"throttle_time_ms": 0, "groups": answers}
    topics = _fetch_group(groups, request.group_id, request.topics, request.require_stable)
    return {"throttle_time_ms": 0, "topics": topics, "error_code": ErrorCode.NONE}
