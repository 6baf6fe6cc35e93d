"""DescribeShareGroupOffsets: each share partition's start offset (and, v1, its lag: the
records from the start offset to the high watermark whose delivery is not complete). A
partition without state answers start offset -1; null topics mean every partition the
group has state for. A group that is not a share group is GROUP_ID_NOT_FOUND."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.protocol.messages.describe_share_group_offsets import API
from kafka_shim.protocol.messages.find_coordinator import GROUP_KEY_TYPE
from kafka_shim.protocol.share_state_records import SharePartitionKey
from kafka_shim.shim.context import RequestContext
from kafka_shim.shim.security.authorizer import AclOperation, ResourceType
from kafka_shim.shim.share.requests import DISABLED, share_groups_enabled
from kafka_shim.storage.log import LEADER_EPOCH

if TYPE_CHECKING:  # the views exist for the type checker (protocol.viewgen)
    from kafka_shim.protocol.views.describe_share_group_offsets import (
        DescribeShareGroupOffsetsRequestData,
        DescribeShareGroupOffsetsRequestGroups,
    )

__all__ = ["API", "handle"]

NO_OFFSET = -1


def _partition(ctx: RequestContext, group_id: str, topic: Any, index: int) -> dict[str, Any]:
    answer: dict[str, Any] = {"partition_index": index, "start_offset": NO_OFFSET, "leader_epoch": NO_OFFSET}
    log = topic.partition(index)
    if log is None:
        return answer | {"error_code": ErrorCode.UNKNOWN_TOPIC_OR_PARTITION}
    state = ctx.broker.share_partitions.get(SharePartitionKey(group_id, topic.topic_id, index))
    if state is None:
        return answer | {"error_code": ErrorCode.NONE, "lag": NO_OFFSET}
    lag = max(log.high_watermark - state.start_offset - state.completed(), 0)
    return answer | {
        "error_code": ErrorCode.NONE,
        "start_offset": state.start_offset,
        "leader_epoch": LEADER_EPOCH,
        "lag": lag,
    }


def _refused_topic(name: str, indexes: list[int], error: ErrorCode) -> dict[str, Any]:
    partitions = [{"partition_index": i, "start_offset": NO_OFFSET, "error_code": error} for i in indexes]
    return {"topic_name": name, "partitions": partitions}


def _group(
    ctx: RequestContext, group: DescribeShareGroupOffsetsRequestGroups, allowed: bool
) -> dict[str, Any]:
    broker = ctx.broker
    answer: dict[str, Any] = {"group_id": group.group_id, "topics": [], "error_code": ErrorCode.NONE}
    if not share_groups_enabled(ctx):
        return answer | {"error_code": ErrorCode.UNSUPPORTED_VERSION, "error_message": DISABLED}
    if not allowed:
        return answer | {"error_code": ctx.refusal(AclOperation.DESCRIBE, ResourceType.GROUP)}
    if not ctx.coordinates(GROUP_KEY_TYPE, group.group_id):
        return answer | {"error_code": ErrorCode.NOT_COORDINATOR}
    wanted: dict[str, list[int]] = {}
    if group.topics is None:
        for key, _ in broker.share_partitions.of_group(group.group_id):
            found = broker.topics.get_by_id(key.topic_id)
            if found is not None:
                wanted.setdefault(found.name, []).append(key.partition)
    else:
        wanted = {t.topic_name: list(t.partitions) for t in group.topics}
    # Topics are authorized first, each on its own, as Kafka does before asking the group.
    readable = ctx.authorized_names(AclOperation.DESCRIBE, ResourceType.TOPIC, wanted)
    denied = ctx.refusal(AclOperation.DESCRIBE, ResourceType.TOPIC)
    answer["topics"] = [_refused_topic(n, wanted[n], denied) for n in sorted(wanted) if n not in readable]
    if broker.group_service.group_type(group.group_id) != "share":
        message = f"Group {group.group_id} is not a share group."
        return answer | {"error_code": ErrorCode.GROUP_ID_NOT_FOUND, "error_message": message}
    for name in sorted(readable):
        topic = broker.topics.get(name)
        if topic is None:
            answer["topics"].append(_refused_topic(name, wanted[name], ErrorCode.UNKNOWN_TOPIC_OR_PARTITION))
            continue
        partitions = [_partition(ctx, group.group_id, topic, i) for i in sorted(wanted[name])]
        answer["topics"].append({"topic_name": name, "topic_id": topic.topic_id, "partitions": partitions})
    return answer


async def handle(ctx: RequestContext, request: DescribeShareGroupOffsetsRequestData) -> dict[str, Any]:
    allowed = ctx.authorized_names(
        AclOperation.DESCRIBE, ResourceType.GROUP, [g.group_id for g in request.groups]
    )
    return {"throttle_time_ms": 0, "groups": [_group(ctx, g, g.group_id in allowed) for g in request.groups]}
