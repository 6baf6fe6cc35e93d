"""DeleteShareGroupOffsets: forget a share group's state for whole topics (tombstones in
`__share_group_state`), when the group has no members (NON_EMPTY_GROUP otherwise). Topics
are authorized first, each on its own; a group that is not a share group is
GROUP_ID_NOT_FOUND."""

from __future__ import annotations

from typing import Any

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.protocol.messages.delete_share_group_offsets import API
from kafka_shim.shim.authorizer import AclOperation, ResourceType
from kafka_shim.shim.context import RequestContext
from kafka_shim.shim.share_requests import (
    DISABLED,
    empty_share_group,
    share_groups_enabled,
    state_not_written,
)
from kafka_shim.storage.errors import StorageError

__all__ = ["API", "handle"]


async def handle(ctx: RequestContext, request: Any) -> dict[str, Any]:
    broker = ctx.broker
    answer: dict[str, Any] = {"throttle_time_ms": 0, "error_code": ErrorCode.NONE, "responses": []}
    if not share_groups_enabled(ctx):
        return answer | {"error_code": ErrorCode.UNSUPPORTED_VERSION, "error_message": DISABLED}
    if not ctx.authorize(AclOperation.DELETE, ResourceType.GROUP, request.group_id):
        return answer | {"error_code": ctx.refusal(AclOperation.DELETE, ResourceType.GROUP)}
    readable = ctx.authorized_names(
        AclOperation.READ, ResourceType.TOPIC, [t.topic_name for t in request.topics]
    )
    error, message = empty_share_group(ctx, request.group_id)
    if readable and error != ErrorCode.NONE:
        answer |= {"error_code": error, "error_message": message}
    for requested in request.topics:
        topic = broker.topics.get(requested.topic_name)
        if requested.topic_name not in readable:
            code = ctx.refusal(AclOperation.READ, ResourceType.TOPIC)
        elif topic is None:
            code = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
        else:
            code = error
        if code == ErrorCode.NONE and topic is not None:
            keys = [
                k
                for k, _ in broker.share_partitions.of_group(request.group_id)
                if k.topic_id == topic.topic_id
            ]
            try:
                broker.share_partitions.delete(keys, ctx.now_ms())
            except StorageError as exc:
                code = state_not_written(exc)
        entry: dict[str, Any] = {"topic_name": requested.topic_name, "error_code": code}
        if topic is not None:
            entry["topic_id"] = topic.topic_id
        answer["responses"].append(entry)
    return answer
