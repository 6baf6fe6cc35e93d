"""ListOffsets: earliest, latest, max-timestamp and by-timestamp lookups.

Under isolation_level read_committed (v2+) latest is the last stable offset and a
lookup finds only offsets below it, as Kafka's Partition.fetchOffsetForTimestamp;
read_uncommitted is bounded by the high watermark, which is the log end here.

v0 is Kafka's legacy lookup by segment (UnifiedLog.legacyFetchOffsetsBefore): the base
offsets of the segments last written at or before the timestamp, newest first, and the
log end for "now"; a consumer's answer is capped at the high watermark.

With several brokers (shim.testbroker.cluster) only the partition's leader answers (Kafka's
fetchOnlyFromLeader, for every replica id but the debugging one), after the client's
current_leader_epoch (v4+) is checked; each offset comes with the epoch it was written in.
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, Any

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.protocol.messages.list_offsets import API
from kafka_shim.shim.context import RequestContext
from kafka_shim.shim.partitions.offsets import (
    EARLIEST,
    EARLIEST_LOCAL,
    EARLIEST_PENDING_UPLOAD,
    LATEST,
    LATEST_TIERED,
    MAX_TIMESTAMP,
    legacy_lookup,
    legacy_offsets,
    lookup,
)
from kafka_shim.shim.security.authorizer import AclOperation, ResourceType

if TYPE_CHECKING:  # the views exist for the type checker (protocol.viewgen)
    from kafka_shim.protocol.views.list_offsets import (
        ListOffsetsRequestData,
        ListOffsetsRequestTopicsPartitions,
    )

__all__ = ["API", "handle", "legacy_offsets"]

# The first version serving each special timestamp (KafkaApis' timestampMinSupportedVersion);
# any other negative timestamp, or one asked of an older version, is UNSUPPORTED_VERSION.
_SPECIAL_SINCE = {
    EARLIEST: 1,
    LATEST: 1,
    MAX_TIMESTAMP: 7,
    EARLIEST_LOCAL: 8,
    LATEST_TIERED: 9,
    EARLIEST_PENDING_UPLOAD: 11,
}
CONSUMER_REPLICA_ID = -1
DEBUGGING_REPLICA_ID = -2
READ_COMMITTED = 1


def _legacy_partition(
    ctx: RequestContext, name: str, partition: ListOffsetsRequestTopicsPartitions, replica_id: int
) -> dict[str, Any]:
    answer: dict[str, Any] = {"partition_index": partition.partition_index}
    if partition.timestamp < EARLIEST:  # v0 knows only latest and earliest among the special times
        return answer | {"error_code": ErrorCode.UNSUPPORTED_VERSION}
    log = ctx.broker.topics.partition(name, partition.partition_index)
    if log is None:
        return answer | {"error_code": ErrorCode.UNKNOWN_TOPIC_OR_PARTITION}
    if replica_id != DEBUGGING_REPLICA_ID:
        led = ctx.leader_error(name, partition.partition_index, -1, log)
        if led != ErrorCode.NONE:
            return answer | {"error_code": led}
    consumer = replica_id == CONSUMER_REPLICA_ID
    offsets = legacy_lookup(log, partition.timestamp, partition.max_num_offsets, consumer, ctx.now_ms())
    return answer | {"error_code": ErrorCode.NONE, "old_style_offsets": offsets}


def _partition(
    ctx: RequestContext,
    name: str,
    partition: ListOffsetsRequestTopicsPartitions,
    committed: bool,
    replica_id: int,
    duplicated: bool,
) -> dict[str, Any]:
    """KafkaApis.handleListOffsetRequestV1AndAbove's checks (a partition asked twice, then a
    special timestamp this version does not serve), then the partition, its leader and the
    client's leader epoch, then the lookup. Refusals keep timestamp and offset -1."""
    answer: dict[str, Any] = {"partition_index": partition.partition_index}
    if duplicated:
        return answer | {"error_code": ErrorCode.INVALID_REQUEST}
    if partition.timestamp < 0 and ctx.api_version < _SPECIAL_SINCE.get(partition.timestamp, 1 << 15):
        return answer | {"error_code": ErrorCode.UNSUPPORTED_VERSION}
    log = ctx.broker.topics.partition(name, partition.partition_index)
    if log is None:
        return answer | {"error_code": ErrorCode.UNKNOWN_TOPIC_OR_PARTITION}
    if replica_id != DEBUGGING_REPLICA_ID:
        led = ctx.leader_error(name, partition.partition_index, partition.current_leader_epoch, log)
        if led != ErrorCode.NONE:
            return answer | {"error_code": led}
    timestamp, offset, epoch = lookup(log, partition.timestamp, committed)
    return answer | {
        "error_code": ErrorCode.NONE,
        "timestamp": timestamp,
        "offset": offset,
        "leader_epoch": epoch,
    }


def _refused(partition: ListOffsetsRequestTopicsPartitions, code: ErrorCode) -> dict[str, Any]:
    return {"partition_index": partition.partition_index, "error_code": code}


async def handle(ctx: RequestContext, request: ListOffsetsRequestData) -> dict[str, Any]:
    committed = request.isolation_level == READ_COMMITTED
    asked = Counter((t.name, p.partition_index) for t in request.topics for p in t.partitions)

    def answer(name: str, partition: ListOffsetsRequestTopicsPartitions) -> dict[str, Any]:
        if ctx.api_version == 0:
            return _legacy_partition(ctx, name, partition, request.replica_id)
        duplicated = asked[name, partition.partition_index] > 1
        return _partition(ctx, name, partition, committed, request.replica_id, duplicated)

    described = ctx.authorized_names(
        AclOperation.DESCRIBE, ResourceType.TOPIC, (t.name for t in request.topics)
    )
    return {
        "throttle_time_ms": 0,
        "topics": [
            {
                "name": topic.name,
                "partitions": [
                    _refused(p, ctx.refusal(AclOperation.DESCRIBE, ResourceType.TOPIC))
                    if topic.name not in described
                    else answer(topic.name, p)
                    for p in topic.partitions
                ],
            }
            for topic in request.topics
        ],
    }
