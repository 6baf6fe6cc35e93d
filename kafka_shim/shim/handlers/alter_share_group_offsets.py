"""AlterShareGroupOffsets: set the start offset of share partitions of a share group that has
no members (NON_EMPTY_GROUP otherwise); each starts afresh there, its in-flight state gone.
Topics are authorized first, each on its own; a group that is not a share group is
GROUP_ID_NOT_FOUND (share_requests.change_share_offsets)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.protocol.messages.alter_share_group_offsets import API
from kafka_shim.protocol.share_state_records import SharePartitionKey
from kafka_shim.shim.context import RequestContext
from kafka_shim.shim.security.authorizer import AclOperation
from kafka_shim.shim.share.requests import change_share_offsets
from kafka_shim.storage.topics import Topic

if TYPE_CHECKING:  # the views exist for the type checker (protocol.viewgen)
    from kafka_shim.protocol.views.alter_share_group_offsets import (
        AlterShareGroupOffsetsRequestData,
        AlterShareGroupOffsetsRequestTopics,
    )

__all__ = ["API", "handle"]


async def handle(ctx: RequestContext, request: AlterShareGroupOffsetsRequestData) -> dict[str, Any]:
    groups = ctx.broker.group_service
    now = ctx.now_ms()

    def answer(requested: AlterShareGroupOffsetsRequestTopics, code: ErrorCode) -> dict[str, Any]:
        return {
            "partitions": [
                {"partition_index": p.partition_index, "error_code": code} for p in requested.partitions
            ]
        }

    def reset(
        topic: Topic, requested: AlterShareGroupOffsetsRequestTopics, error: ErrorCode
    ) -> dict[str, Any]:
        answers = []
        for p in requested.partitions:
            key = SharePartitionKey(request.group_id, topic.topic_id, p.partition_index)
            if topic.partition(p.partition_index) is None:
                code = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
            elif error != ErrorCode.NONE:
                code = error
            else:
                code = groups.reset_share_offset(key, p.start_offset, now)
            answers.append({"partition_index": p.partition_index, "error_code": code})
        return {"partitions": answers}

    return change_share_offsets(ctx, request, AclOperation.READ, answer, reset)
