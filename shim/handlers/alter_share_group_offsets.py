"""AlterShareGroupOffsets: set the start offset of share partitions of a share group that has
no members (NON_EMPTY_GROUP otherwise); each starts afresh there, its in-flight state gone.
Topics are authorized first, each on its own; a group that is not a share group is
GROUP_ID_NOT_FOUND."""

from __future__ import annotations

from typing import Any

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.protocol.messages.alter_share_group_offsets import API
from kafka_shim.protocol.share_state_records import SharePartitionKey
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
    if not ctx.authorize(AclOperation.READ, ResourceType.GROUP, request.group_id):
        return answer | {"error_code": ctx.refusal(AclOperation.READ, ResourceType.GROUP)}
    readable = ctx.authorized_names(
        AclOperation.READ, ResourceType.TOPIC, [t.topic_name for t in request.topics]
    )
    error, message = empty_share_group(ctx, request.group_id)
    if readable and error != ErrorCode.NONE:
        answer |= {"error_code": error, "error_message": message}
    now = ctx.now_ms()
    for requested in request.topics:
        topic = broker.topics.get(requested.topic_name)
        partitions = []
        for p in requested.partitions:
            if requested.topic_name not in readable:
                code = ctx.refusal(AclOperation.READ, ResourceType.TOPIC)
            elif topic is None or topic.partition(p.partition_index) is None:
                code = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
            else:
                code = error
            if code == ErrorCode.NONE and topic is not None:
                key = SharePartitionKey(request.group_id, topic.topic_id, p.partition_index)
                try:
                    broker.share_partitions.reset(key, p.start_offset, now)
                except StorageError as exc:
                    code = state_not_written(exc)
            partitions.append({"partition_index": p.partition_index, "error_code": code})
        entry: dict[str, Any] = {"topic_name": requested.topic_name, "partitions": partitions}
        if topic is not None:
            entry["topic_id"] = topic.topic_id
        answer["responses"].append(entry)
    return answer
