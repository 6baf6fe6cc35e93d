"""DeleteRecords: move log start offsets forward (the low watermark), as
`kafka-delete-records` and AdminClient.delete_records do; with several brokers only a
partition's leader does (NOT_LEADER_OR_FOLLOWER elsewhere)."""

from __future__ import annotations

from typing import Any

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.protocol.messages.delete_records import API
from kafka_shim.shim.authorizer import AclOperation, ResourceType
from kafka_shim.shim.context import RequestContext
from kafka_shim.storage.errors import StorageError
from kafka_shim.storage.topics import Topic

__all__ = ["API", "handle"]

NO_LOW_WATERMARK = -1


def delete_partition_records(topic: Topic | None, requested: Any) -> dict[str, Any]:
    """One partition's part of a DeleteRecords answer (also the console's delete action)."""
    answer = {"partition_index": requested.partition_index, "low_watermark": NO_LOW_WATERMARK}
    log = topic.partition(requested.partition_index) if topic is not None else None
    if log is None:
        return answer | {"error_code": ErrorCode.UNKNOWN_TOPIC_OR_PARTITION}
    if not log.config.deletes:
        # As Kafka: records of a compact-only topic are removed by compaction alone.
        return answer | {"error_code": ErrorCode.POLICY_VIOLATION}
    try:
        low_watermark = log.delete_records(requested.offset)
    except StorageError as exc:
        return answer | {"error_code": exc.code}
    return answer | {"low_watermark": low_watermark, "error_code": ErrorCode.NONE}


def _refused(requested: Any, code: ErrorCode) -> dict[str, Any]:
    return {
        "partition_index": requested.partition_index,
        "low_watermark": NO_LOW_WATERMARK,
        "error_code": code,
    }


def _delete(ctx: RequestContext, name: str, requested: Any) -> dict[str, Any]:
    """Only the partition's leader deletes (shim.cluster; Kafka's ReplicaManager.deleteRecords)."""
    topic = ctx.broker.topics.get(name)
    log = topic.partition(requested.partition_index) if topic is not None else None
    if log is not None:
        led = ctx.leader_error(name, requested.partition_index, -1, log)
        if led != ErrorCode.NONE:
            return _refused(requested, led)
    return delete_partition_records(topic, requested)


async def handle(ctx: RequestContext, request: Any) -> dict[str, Any]:
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
