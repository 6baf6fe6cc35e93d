"""ListOffsets: earliest, latest, max-timestamp and by-timestamp lookups."""

from __future__ import annotations

from typing import Any

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.protocol.messages.list_offsets import API
from kafka_shim.shim.authorizer import AclOperation, ResourceType
from kafka_shim.shim.context import RequestContext
from kafka_shim.storage.log import LEADER_EPOCH, PartitionLog

__all__ = ["API", "handle"]

LATEST = -1
EARLIEST = -2
MAX_TIMESTAMP = -3  # v7+
EARLIEST_LOCAL = -4  # v8+: no tiered storage, so the same as earliest
NO_TIMESTAMP = -1


def _lookup(log: PartitionLog, timestamp: int) -> tuple[int, int] | None:
    """(timestamp, offset) for a request timestamp; None when it is not one we know."""
    if timestamp == LATEST:
        return NO_TIMESTAMP, log.log_end_offset  # last offset of the last batch + 1
    if timestamp in (EARLIEST, EARLIEST_LOCAL):
        return NO_TIMESTAMP, log.log_start_offset
    if timestamp == MAX_TIMESTAMP:
        found = log.max_timestamp()
    elif timestamp >= 0:
        found = log.offset_for_timestamp(timestamp)
    else:
        return None
    return (found.timestamp, found.offset) if found is not None else (NO_TIMESTAMP, -1)


def _partition(ctx: RequestContext, name: str, request: Any) -> dict[str, Any]:
    answer: dict[str, Any] = {"partition_index": request.partition_index}
    log = ctx.broker.topics.partition(name, request.partition_index)
    if log is None:
        return answer | {"error_code": ErrorCode.UNKNOWN_TOPIC_OR_PARTITION}
    found = _lookup(log, request.timestamp)
    if found is None:
        return answer | {"error_code": ErrorCode.INVALID_REQUEST}
    timestamp, offset = found
    epoch = LEADER_EPOCH if offset >= 0 else -1
    return answer | {
        "error_code": ErrorCode.NONE,
        "timestamp": timestamp,
        "offset": offset,
        "leader_epoch": epoch,
    }


def _refused(request: Any) -> dict[str, Any]:
    return {"partition_index": request.partition_index, "error_code": ErrorCode.TOPIC_AUTHORIZATION_FAILED}


async def handle(ctx: RequestContext, request: Any) -> dict[str, Any]:
    described = ctx.authorized_names(
        AclOperation.DESCRIBE, ResourceType.TOPIC, (t.name for t in request.topics)
    )
    return {
        "throttle_time_ms": 0,
        "topics": [
            {
                "name": topic.name,
                "partitions": [
                    _partition(ctx, topic.name, p) if topic.name in described else _refused(p)
                    for p in topic.partitions
                ],
            }
            for topic in request.topics
        ],
    }
