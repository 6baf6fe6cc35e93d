"""OffsetForLeaderEpoch: the end offset of a leader epoch. This broker has led every
partition since its creation at epoch 0 (`storage.log.LEADER_EPOCH`, what Metadata
advertises), so its leader-epoch cache holds that one epoch, starting at the log start.

Kafka's answers (Partition.lastOffsetForLeaderEpoch, LeaderEpochFileCache.endOffsetFor):
a `current_leader_epoch` older than the broker's is FENCED_LEADER_EPOCH, a newer one
UNKNOWN_LEADER_EPOCH, -1 is not checked; the current epoch ends at the log end offset; an
epoch newer than any known, or -1, has no end (-1, -1); one older than the first known
ends where the first known one starts.
"""

from __future__ import annotations

from typing import Any

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.protocol.messages.offset_for_leader_epoch import (
    API,
    NO_LEADER_EPOCH,
    UNDEFINED_EPOCH_OFFSET,
)
from kafka_shim.shim.authorizer import CLUSTER_NAME, AclOperation, ResourceType
from kafka_shim.shim.context import RequestContext
from kafka_shim.storage.log import LEADER_EPOCH, PartitionLog

__all__ = ["API", "end_offset_for_epoch", "handle"]


def end_offset_for_epoch(log: PartitionLog, epoch: int) -> tuple[int, int]:
    """The (epoch, end offset) Kafka's leader-epoch cache answers for `epoch`."""
    if epoch == LEADER_EPOCH:
        return LEADER_EPOCH, log.log_end_offset
    if epoch == NO_LEADER_EPOCH or epoch > LEADER_EPOCH:
        return NO_LEADER_EPOCH, UNDEFINED_EPOCH_OFFSET
    return epoch, log.log_start_offset  # older than the first epoch: where that one starts


def _epoch_error(current_leader_epoch: int) -> ErrorCode:
    if current_leader_epoch == NO_LEADER_EPOCH:
        return ErrorCode.NONE
    if current_leader_epoch < LEADER_EPOCH:
        return ErrorCode.FENCED_LEADER_EPOCH
    if current_leader_epoch > LEADER_EPOCH:
        return ErrorCode.UNKNOWN_LEADER_EPOCH
    return ErrorCode.NONE


def _end_offset(ctx: RequestContext, topic: str, requested: Any) -> dict[str, Any]:
    result: dict[str, Any] = {"partition": requested.partition}
    log = ctx.broker.topics.partition(topic, requested.partition)
    if log is None:
        return result | {"error_code": ErrorCode.UNKNOWN_TOPIC_OR_PARTITION}
    error = _epoch_error(requested.current_leader_epoch)
    if error is not ErrorCode.NONE:
        return result | {"error_code": error}
    epoch, end_offset = end_offset_for_epoch(log, requested.leader_epoch)
    return result | {"error_code": ErrorCode.NONE, "leader_epoch": epoch, "end_offset": end_offset}


def _refused(topic: Any) -> dict[str, Any]:
    return {
        "topic": topic.topic,
        "partitions": [
            {"partition": p.partition, "error_code": ErrorCode.TOPIC_AUTHORIZATION_FAILED}
            for p in topic.partitions
        ],
    }


async def handle(ctx: RequestContext, request: Any) -> dict[str, Any]:
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
    refused = [_refused(t) for t in request.topics if t.topic not in described]
    return {"throttle_time_ms": 0, "topics": answered + refused}
