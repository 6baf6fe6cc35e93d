"""DescribeTopicPartitions: Metadata's description of topics, sorted by name and paged by a
cursor, at most `max.request.partition.size.limit` partitions a response (fewer if the
request asks), as Kafka's DescribeTopicPartitionsRequestHandler and
KRaftMetadataCache.getTopicMetadataForDescribeTopicResponse answer it.

An empty topic list means every topic the principal may describe (the others left out
silently); named topics it may not describe come last, TOPIC_AUTHORIZATION_FAILED without
an id. A cursor whose topic is not among those named, or whose partition is negative, makes
the whole request INVALID_REQUEST.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.protocol.messages.describe_topic_partitions import API
from kafka_shim.protocol.messages.metadata import ZERO_UUID
from kafka_shim.shim.context import RequestContext
from kafka_shim.shim.handlers.metadata import partition_state
from kafka_shim.shim.security.authorizer import AclOperation, ResourceType
from kafka_shim.storage.internal_topics import INTERNAL_TOPICS
from kafka_shim.storage.topics import Topic, invalid_topic_name

if TYPE_CHECKING:  # the views exist for the type checker (protocol.viewgen)
    from kafka_shim.protocol.views.describe_topic_partitions import (
        DescribeTopicPartitionsRequestCursor,
        DescribeTopicPartitionsRequestData,
    )

__all__ = ["API", "handle"]


def _topic_entry(code: ErrorCode, name: str, topic_id: Any = ZERO_UUID) -> dict[str, Any]:
    return {
        "error_code": code,
        "name": name,
        "topic_id": topic_id,
        "is_internal": name in INTERNAL_TOPICS,
        "partitions": [],
    }


def _invalid(request: DescribeTopicPartitionsRequestData) -> dict[str, Any]:
    """Kafka's getErrorResponse for INVALID_REQUEST: each topic named, with the error."""
    topics = [
        _topic_entry(ErrorCode.INVALID_REQUEST, t.name) | {"is_internal": False} for t in request.topics
    ]
    return {"throttle_time_ms": 0, "topics": topics, "next_cursor": None}


def _partitions(
    ctx: RequestContext, topic: Topic, start: int, limit: int
) -> tuple[list[dict[str, Any]], int]:
    """The partitions from `start`, at most `limit`, and the index of the next one (-1: none)."""
    count = len(topic.partitions)
    upper = min(count, start + limit)
    described = [
        partition_state(ctx.broker.cluster, topic, index)
        | {"eligible_leader_replicas": [], "last_known_elr": []}
        for index in range(start, upper)
    ]
    return described, upper if upper < count else -1


def _page(
    ctx: RequestContext,
    names: list[str],
    cursor: DescribeTopicPartitionsRequestCursor | None,
    limit: int,
    every: bool,
) -> dict[str, Any]:
    """Kafka's getTopicMetadataForDescribeTopicResponse over `names`, sorted."""
    topics: list[dict[str, Any]] = []
    next_cursor = None
    remaining = limit
    for name in names:
        if remaining == 0:  # the next page starts with this topic
            next_cursor = {"topic_name": name, "partition_index": 0}
            break
        topic = ctx.broker.topics.get(name)
        if topic is None:
            if not every:
                code = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
                if invalid_topic_name(name) is not None:
                    code = ErrorCode.INVALID_TOPIC_EXCEPTION
                topics.append(_topic_entry(code, name))
            continue
        start = cursor.partition_index if cursor is not None and name == cursor.topic_name else 0
        partitions, following = _partitions(ctx, topic, start, remaining)
        topics.append(_topic_entry(ErrorCode.NONE, name, topic.topic_id) | {"partitions": partitions})
        if following != -1:
            next_cursor = {"topic_name": name, "partition_index": following}
            break
        remaining -= len(partitions)
    for entry in topics:
        entry["topic_authorized_operations"] = ctx.authorized_operations(ResourceType.TOPIC, entry["name"])
    return {"topics": topics, "next_cursor": next_cursor}


async def handle(ctx: RequestContext, request: DescribeTopicPartitionsRequestData) -> dict[str, Any]:
    every = not request.topics
    cursor = request.cursor
    first = cursor.topic_name if cursor is not None else ""
    requested = [t.name for t in ctx.broker.topics] if every else [t.name for t in request.topics]
    names = {name for name in requested if name >= first}
    if cursor is not None and ((not every and cursor.topic_name not in names) or cursor.partition_index < 0):
        return _invalid(request)
    described = ctx.authorized_names(AclOperation.DESCRIBE, ResourceType.TOPIC, names)
    limit = max(min(ctx.broker.config.max_request_partition_size_limit, request.response_partition_limit), 1)
    page = _page(ctx, sorted(described), cursor, limit, every)
    refused = (
        []
        if every
        else [
            _topic_entry(ctx.refusal(AclOperation.DESCRIBE, ResourceType.TOPIC), n)
            for n in sorted(names - described)
        ]
    )
    return {"throttle_time_ms": 0, "topics": page["topics"] + refused, "next_cursor": page["next_cursor"]}
