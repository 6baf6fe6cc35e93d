"""DeleteTopics: by name (v1-5) or by name or topic id (v6)."""

from __future__ import annotations

from typing import Any

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.protocol.messages.delete_topics import API
from kafka_shim.protocol.messages.metadata import ZERO_UUID
from kafka_shim.shim.context import RequestContext
from kafka_shim.storage.topics import Topic

__all__ = ["API", "handle"]


def _delete(ctx: RequestContext, name: str | None, topic_id: Any) -> dict[str, Any]:
    topics = ctx.broker.topics
    topic: Topic | None
    if name is not None:
        topic, missing = topics.get(name), ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    else:
        topic, missing = topics.get_by_id(topic_id), ErrorCode.UNKNOWN_TOPIC_ID
    answer = {"name": name, "topic_id": topic_id, "error_message": None}
    if topic is None:
        return answer | {"error_code": missing}
    if not ctx.broker.config.delete_topic_enable:
        return answer | {"error_code": ErrorCode.TOPIC_DELETION_DISABLED}
    topics.delete(topic.name)
    return answer | {"name": topic.name, "topic_id": topic.topic_id, "error_code": ErrorCode.NONE}


async def handle(ctx: RequestContext, request: Any) -> dict[str, Any]:
    if ctx.api_version >= 6:
        wanted = [(t.name, t.topic_id) for t in request.topics]
    else:
        wanted = [(name, ZERO_UUID) for name in request.topic_names]
    return {"throttle_time_ms": 0, "responses": [_delete(ctx, name, topic_id) for name, topic_id in wanted]}
