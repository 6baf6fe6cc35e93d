"""DeleteTopics: by name (v0-5) or by name or topic id (v6)."""

from __future__ import annotations

from typing import Any

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.protocol.messages.delete_topics import API
from kafka_shim.protocol.messages.metadata import ZERO_UUID
from kafka_shim.shim.authorizer import CLUSTER_NAME, AclOperation, ResourceType
from kafka_shim.shim.context import RequestContext
from kafka_shim.storage.topics import Topic

__all__ = ["API", "handle"]


def _allowed(ctx: RequestContext, operation: AclOperation, names: list[str]) -> set[str]:
    """DELETE on the cluster allows DESCRIBE and DELETE of every topic (Kafka's controller)."""
    if ctx.authorized_names(AclOperation.DELETE, ResourceType.CLUSTER, (CLUSTER_NAME,), log_denied=False):
        return set(names)
    return ctx.authorized_names(operation, ResourceType.TOPIC, names)


def _delete(
    ctx: RequestContext, name: str | None, topic_id: Any, describable: set[str], deletable: set[str]
) -> dict[str, Any]:
    """DESCRIBE before existence for a name; for an id (not secret), existence first, and a
    refusal without the name to a principal that may not describe the topic."""
    topics = ctx.broker.topics
    topic: Topic | None
    answer = {"name": name, "topic_id": topic_id, "error_message": None}
    refused = answer | {"error_code": ErrorCode.TOPIC_AUTHORIZATION_FAILED}
    if name is not None:
        if name not in describable:
            return refused
        topic, missing = topics.get(name), ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    else:
        topic, missing = topics.get_by_id(topic_id), ErrorCode.UNKNOWN_TOPIC_ID
    if topic is None:
        return answer | {"error_code": missing}
    if topic.name not in deletable:
        return refused | {"name": topic.name if topic.name in describable else None}
    if not ctx.broker.config.delete_topic_enable:
        return answer | {"error_code": ErrorCode.TOPIC_DELETION_DISABLED}
    topics.delete(topic.name)
    return answer | {"name": topic.name, "topic_id": topic.topic_id, "error_code": ErrorCode.NONE}


async def handle(ctx: RequestContext, request: Any) -> dict[str, Any]:
    if ctx.api_version >= 6:
        wanted = [(t.name, t.topic_id) for t in request.topics]
    else:
        wanted = [(name, ZERO_UUID) for name in request.topic_names]
    topics = ctx.broker.topics
    by_id = (topics.get_by_id(topic_id) for name, topic_id in wanted if name is None)
    names = [name for name, _ in wanted if name is not None] + [t.name for t in by_id if t is not None]
    describable = _allowed(ctx, AclOperation.DESCRIBE, names)
    deletable = _allowed(ctx, AclOperation.DELETE, names)
    responses = [_delete(ctx, name, topic_id, describable, deletable) for name, topic_id in wanted]
    return {"throttle_time_ms": 0, "responses": responses}
