"""OffsetFetch: committed offsets of one group (v0-7) or several (v8+; v10 names topics by id).

A null topic list (v2+) asks for every partition the group committed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.protocol.messages.find_coordinator import GROUP_KEY_TYPE
from kafka_shim.protocol.messages.metadata import ZERO_UUID
from kafka_shim.protocol.messages.offset_fetch import API
from kafka_shim.shim.context import RequestContext
from kafka_shim.shim.coordinator.types import FetchedOffset, TopicPartition, by_topic
from kafka_shim.shim.security.authorizer import AclOperation, ResourceType

if TYPE_CHECKING:  # the views exist for the type checker (protocol.viewgen)
    from kafka_shim.protocol.views.offset_fetch import OffsetFetchRequestData, OffsetFetchRequestGroups

__all__ = ["API", "handle"]


def _fetch_group(
    ctx: RequestContext, group_id: str, topics: list[Any] | None, require_stable: bool
) -> list[dict[str, Any]]:
    """The group's offsets of the topics the principal may DESCRIBE: those of the others are
    refused by partition when asked by name, and left out of "every partition". From v10
    topics are named by id: an unknown id is refused UNKNOWN_TOPIC_ID, and "every partition"
    leaves out a topic that has no id any more (Kafka's fetchAllOffsetsForGroup)."""
    groups = ctx.broker.group_service
    if topics is None:
        fetched = groups.fetch_offsets(group_id, None, require_stable)
        described = ctx.authorized_names(
            AclOperation.DESCRIBE, ResourceType.TOPIC, (tp.topic for tp in fetched)
        )
        fetched = {tp: offset for tp, offset in fetched.items() if tp.topic in described}
        ids = {name: topic.topic_id for name in described if (topic := ctx.broker.topics.get(name))}
        return [
            {"name": name, "topic_id": ids.get(name, ZERO_UUID), "partitions": _partitions(entries)}
            for name, entries in by_topic(fetched).items()
            if ctx.api_version < 10 or name in ids
        ]
    named = [(t, ctx.broker.topic_name(t.topic_id) if ctx.api_version >= 10 else t.name) for t in topics]
    described = ctx.authorized_names(
        AclOperation.DESCRIBE, ResourceType.TOPIC, (name for _, name in named if name is not None)
    )
    wanted = [
        TopicPartition(name, index) for t, name in named if name in described for index in t.partition_indexes
    ]
    fetched = groups.fetch_offsets(group_id, wanted, require_stable) if wanted else {}
    ids = {name: _topic_id(ctx, t) for t, name in named if name is not None}
    answers = [
        {"name": name, "topic_id": ids[name], "partitions": _partitions(entries)}
        for name, entries in by_topic(fetched).items()
    ]
    refused = [
        {
            "name": name or "",
            "topic_id": _topic_id(ctx, t),
            "partitions": [
                _refused(
                    index,
                    ErrorCode.UNKNOWN_TOPIC_ID
                    if name is None
                    else ctx.refusal(AclOperation.DESCRIBE, ResourceType.TOPIC),
                )
                for index in t.partition_indexes
            ],
        }
        for t, name in named
        if name not in described
    ]
    return answers + refused


def _topic_id(ctx: RequestContext, topic: Any) -> Any:
    """A requested topic's id: v10 names topics by id; before, their answers carry none."""
    return topic.topic_id if ctx.api_version >= 10 else ZERO_UUID


def _refused(index: int, code: ErrorCode) -> dict[str, Any]:
    return {"partition_index": index, "committed_offset": -1, "metadata": "", "error_code": code}


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
    return ctx.broker.group_service.fetch_refusal(group_id, member_id, member_epoch)


def _group(ctx: RequestContext, group: OffsetFetchRequestGroups, require_stable: bool) -> dict[str, Any]:
    denial = ctx.denial(AclOperation.DESCRIBE, ResourceType.GROUP, group.group_id)
    if denial is not None:
        return {"group_id": group.group_id, "topics": [], "error_code": denial}
    if not ctx.coordinates(GROUP_KEY_TYPE, group.group_id):
        return {"group_id": group.group_id, "topics": [], "error_code": ErrorCode.NOT_COORDINATOR}
    error = _member_error(ctx, group.group_id, group.member_id, group.member_epoch)
    if error:
        return {"group_id": group.group_id, "topics": [], "error_code": error}
    topics = _fetch_group(ctx, group.group_id, group.topics, require_stable)
    return {"group_id": group.group_id, "topics": topics, "error_code": ErrorCode.NONE}


def _refused_group(ctx: RequestContext, request: OffsetFetchRequestData, denied: ErrorCode) -> dict[str, Any]:
    """Kafka's answer to a v0-7 request for a group the principal may not DESCRIBE, or that
    another broker coordinates: v0-1 have no top-level error, so each partition asked for
    carries it."""
    topics = []
    if ctx.api_version < 2:
        topics = [
            {"name": t.name, "partitions": [_refused(index, denied) for index in t.partition_indexes]}
            for t in request.topics or []
        ]
    return {"throttle_time_ms": 0, "topics": topics, "error_code": denied}


async def handle(ctx: RequestContext, request: OffsetFetchRequestData) -> dict[str, Any]:
    if ctx.api_version >= 8:
        answers = [_group(ctx, g, request.require_stable) for g in request.groups]
        return {"throttle_time_ms": 0, "groups": answers}
    denial = ctx.denial(AclOperation.DESCRIBE, ResourceType.GROUP, request.group_id)
    if denial is not None:
        return _refused_group(ctx, request, denial)
    if not ctx.coordinates(GROUP_KEY_TYPE, request.group_id):
        return _refused_group(ctx, request, ErrorCode.NOT_COORDINATOR)
    topics = _fetch_group(ctx, request.group_id, request.topics, request.require_stable)
    return {"throttle_time_ms": 0, "topics": topics, "error_code": ErrorCode.NONE}
