"""OffsetForLeaderEpoch: the end offset of a leader epoch, from the partition log's
leader-epoch cache (`PartitionLog.end_offset_for_epoch`, Kafka's LeaderEpochFileCache.endOffsetFor):
epochs start at 0 and grow when an emulated broker (shim.testbroker.cluster) takes the leadership over.

Kafka's answers (Partition.lastOffsetForLeaderEpoch): a `current_leader_epoch` older than the
partition's is FENCED_LEADER_EPOCH, a newer one UNKNOWN_LEADER_EPOCH, -1 is not checked; then
a broker that does not lead the partition answers NOT_LEADER_OR_FOLLOWER (a consumer's request,
replica id -1; followers do not exist here).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.protocol.messages.offset_for_leader_epoch import API
from kafka_shim.shim.context import RequestContext
from kafka_shim.shim.security.authorizer import CLUSTER_NAME, AclOperation, ResourceType

if TYPE_CHECKING:  # the views exist for the type checker (protocol.viewgen)
    from kafka_shim.protocol.views.offset_for_leader_epoch import (
        OffsetForLeaderEpochRequestData,
        OffsetForLeaderEpochRequestTopics,
        OffsetForLeaderEpochRequestTopicsPartitions,
    )

__all__ = ["API", "handle"]


def _end_offset(
    ctx: RequestContext, topic: str, requested: OffsetForLeaderEpochRequestTopicsPartitions
) -> dict[str, Any]:
    result: dict[str, Any] = {"partition": requested.partition}
    log = ctx.broker.topics.partition(topic, requested.partition)
    if log is None:
        return result | {"error_code": ErrorCode.UNKNOWN_TOPIC_OR_PARTITION}
    error = ctx.leader_error(topic, requested.partition, requested.current_leader_epoch, log)
    if error is not ErrorCode.NONE:
        return result | {"error_code": error}
    epoch, end_offset = log.end_offset_for_epoch(requested.leader_epoch)
    return result | {"error_code": ErrorCode.NONE, "leader_epoch": epoch, "end_offset": end_offset}


def _refused(topic: OffsetForLeaderEpochRequestTopics, code: ErrorCode) -> dict[str, Any]:
    return {
        "topic": topic.topic,
        "partitions": [{"partition": p.partition, "error_code": code} for p in topic.partitions],
    }


async def handle(ctx: RequestContext, request: OffsetForLeaderEpochRequestData) -> dict[str, Any]:
    names = [t.topic for t in request.topics]
    # Followers need CLUSTER_ACTION; consumers (KIP-320) DESCRIBE on the topic. The cluster
    # permission is asked first, its denial not logged, as KafkaApis does.
    if ctx.authorized_names(
        AclOperation.CLUSTER_ACTION, ResourceType.CLUSTER, (CLUSTER_NAME,), log_denied=False
    ):
        described = set(names)
    else:
        described = ctx.authorized_names(AclOperation.DESCRIBE, ResourceType.TOPIC, names)
    answered = [
        {"topic": t.topic, "partitions": [_end_offset(ctx, t.topic, p) for p in t.partitions]}
        for t in request.topics
        if t.topic in described
    ]
    code = ctx.refusal(AclOperation.DESCRIBE, ResourceType.TOPIC)
    refused = [_refused(t, code) for t in request.topics if t.topic not in described]
    return {"throttle_time_ms": 0, "topics": answered + refused}
