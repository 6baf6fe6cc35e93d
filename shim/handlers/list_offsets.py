"""ListOffsets: earliest, latest, max-timestamp and by-timestamp lookups.

Under isolation_level read_committed (v2+) latest is the last stable offset and a
lookup finds only offsets below it, as Kafka's Partition.fetchOffsetForTimestamp;
read_uncommitted is bounded by the high watermark, which is the log end here.
"""

from __future__ import annotations

from typing import Any

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.protocol.messages.list_offsets import API
from kafka_shim.shim.context import RequestContext
from kafka_shim.storage.log import LEADER_EPOCH, PartitionLog

__all__ = ["API", "handle"]

LATEST = -1
EARLIEST = -2
MAX_TIMESTAMP = -3  # v7+
EARLIEST_LOCAL = -4  # v8+: no tiered storage, so the same as earliest
NO_TIMESTAMP = -1
READ_COMMITTED = 1


def _lookup(log: PartitionLog, timestamp: int, committed: bool) -> tuple[int, int] | None:
    """(timestamp, offset) for a request timestamp; None when it is not one we know."""
    # The high watermark is the last offset of the last batch + 1, not its base offset + 1.
    fetchable = log.last_stable_offset if committed else log.high_watermark
    if timestamp == LATEST:
        return NO_TIMESTAMP, fetchable
    if timestamp in (EARLIEST, EARLIEST_LOCAL):
        return NO_TIMESTAMP, log.log_start_offset
    if timestamp == MAX_TIMESTAMP:
        found = log.max_timestamp()
    elif timestamp >= 0:
        found = log.offset_for_timestamp(timestamp)
    else:
        return None
    if found is None or found.offset >= fetchable:
        return NO_TIMESTAMP, -1
    return found.timestamp, found.offset


def _partition(ctx: RequestContext, name: str, request: Any, committed: bool) -> dict[str, Any]:
    answer: dict[str, Any] = {"partition_index": request.partition_index}
    log = ctx.broker.topics.partition(name, request.partition_index)
    if log is None:
        return answer | {"error_code": ErrorCode.UNKNOWN_TOPIC_OR_PARTITION}
    found = _lookup(log, request.timestamp, committed)
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


async def handle(ctx: RequestContext, request: Any) -> dict[str, Any]:
    committed = request.isolation_level == READ_COMMITTED
    return {
        "throttle_time_ms": 0,
        "topics": [
            {
                "name": topic.name,
                "partitions": [_partition(ctx, topic.name, p, committed) for p in topic.partitions],
            }
            for topic in request.topics
        ],
    }
