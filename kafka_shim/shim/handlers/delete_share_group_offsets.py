"""DeleteShareGroupOffsets: forget a share group's state for whole topics (tombstones in
`__share_group_state`), when the group has no members (NON_EMPTY_GROUP otherwise). Topics
are authorized first, each on its own; a group that is not a share group is
GROUP_ID_NOT_FOUND (share_requests.change_share_offsets)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.protocol.messages.delete_share_group_offsets import API
from kafka_shim.shim.context import RequestContext
from kafka_shim.shim.security.authorizer import AclOperation
from kafka_shim.shim.share.requests import change_share_offsets
from kafka_shim.storage.topics import Topic

if TYPE_CHECKING:  # the views exist for the type checker (protocol.viewgen)
    from kafka_shim.protocol.views.delete_share_group_offsets import (
        DeleteShareGroupOffsetsRequestData,
        DeleteShareGroupOffsetsRequestTopics,
    )

__all__ = ["API", "handle"]


async def handle(ctx: RequestContext, request: DeleteShareGroupOffsetsRequestData) -> dict[str, Any]:
    groups = ctx.broker.group_service
    now = ctx.now_ms()

    def answer(requested: DeleteShareGroupOffsetsRequestTopics, code: ErrorCode) -> dict[str, Any]:
        return {"error_code": code}

    def delete(
        topic: Topic, requested: DeleteShareGroupOffsetsRequestTopics, error: ErrorCode
    ) -> dict[str, Any]:
        if error != ErrorCode.NONE:
            return answer(requested, error)
        return answer(requested, groups.delete_share_offsets(request.group_id, topic.topic_id, now))

    return change_share_offsets(ctx, request, AclOperation.DELETE, answer, delete)
