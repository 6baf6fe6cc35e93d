"""DeleteRecords: move log start offsets forward (the low watermark), as
`kafka-delete-records` and AdminClient.delete_records do; with several brokers only a
partition's leader does (NOT_LEADER_OR_FOLLOWER elsewhere)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.protocol.messages.delete_records import API
from kafka_shim.shim.context import RequestContext
from kafka_shim.shim.partitions.delete import NO_LOW_WATERMARK, delete_records
from kafka_shim.shim.security.authorizer import AclOperation, ResourceType

if TYPE_CHECKING:  # the views exist for the type checker (protocol.viewgen)
    from kafka_shim.protocol.views.delete_records import (
        DeleteRecordsRequestData,
        DeleteRecordsRequestTopicsPartitions,
    )

__all__ = ["API", "handle"]


def _refused(requested: DeleteRecordsRequestTopicsPartitions, code: ErrorCode) -> dict[str, Any]:
    return {
        "partition_index": requested.partition_index,
        "low_watermark": NO_LOW_WATERMARK,
        "error_code": code,
    }


def _delete(
    ctx: RequestContext, name: str, requested: DeleteRecordsRequestTopicsPartitions
) -> dict[str, Any]:
    """Only the partition's leader deletes (shim.testbroker.cluster; Kafka's ReplicaManager.deleteRecords)."""
    topic = ctx.broker.topics.get(name)
    log = topic.partition(requested.partition_index) if topic is not None else None
    if log is not None:
        led = ctx.leader_error(name, requested.partition_index, -1, log)
        if led != ErrorCode.NONE:
            return _refused(requested, led)
    code, low_watermark = delete_records(topic, requested.partition_index, requested.offset)
    return {"partition_index": requested.partition_index, "low_watermark": low_watermark, "error_code": code}


async def handle(ctx: RequestContext, request: DeleteRecordsRequestData) -> dict[str, Any]:
    deletable = ctx.authorized_names(
        AclOperation.DELETE, ResourceType.TOPIC, (t.name for t in request.topics)
    )
    return {
        "throttle_time_ms": 0,
        "topics": [
            {
                "name": t.name,
                "partitions": [
                    _delete(ctx, t.name, p)
                    if t.name in deletable
                    else _refused(p, ctx.refusal(AclOperation.DELETE, ResourceType.TOPIC))
                    for p in t.partitions
                ],
            }
            for t in request.topics
        ],
    }
