"""OffsetDelete: drop a group's offsets for partitions none of its members consume."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.protocol.messages.find_coordinator import GROUP_KEY_TYPE
from kafka_shim.protocol.messages.offset_delete import API
from kafka_shim.shim.context import RequestContext
from kafka_shim.shim.coordinator.types import TopicPartition, by_topic
from kafka_shim.shim.security.authorizer import AclOperation, ResourceType

if TYPE_CHECKING:  # the views exist for the type checker (protocol.viewgen)
    from kafka_shim.protocol.views.offset_delete import OffsetDeleteRequestData

__all__ = ["API", "handle"]


async def handle(ctx: RequestContext, request: OffsetDeleteRequestData) -> dict[str, Any]:
    errors: dict[TopicPartition, ErrorCode] = {}
    denial = ctx.denial(AclOperation.DELETE, ResourceType.GROUP, request.group_id)
    if denial is not None:
        error = denial
    elif not ctx.coordinates(GROUP_KEY_TYPE, request.group_id):
        error = ErrorCode.NOT_COORDINATOR
    else:
        readable = ctx.authorized_names(
            AclOperation.READ, ResourceType.TOPIC, (t.name for t in request.topics)
        )
        partitions = [TopicPartition(t.name, p.partition_index) for t in request.topics for p in t.partitions]
        broker = ctx.broker
        # KafkaApis.handleOffsetDeleteRequest: a partition the broker does not have is answered
        # UNKNOWN_TOPIC_OR_PARTITION there; only the others reach the group coordinator.
        unknown = {
            tp
            for tp in partitions
            if tp.topic in readable and broker.topics.partition(tp.topic, tp.partition) is None
        }
        allowed = [tp for tp in partitions if tp.topic in readable and tp not in unknown]
        error, errors = broker.group_service.delete_offsets(request.group_id, allowed, ctx.now_ms())
        errors = (
            errors
            | dict.fromkeys(unknown, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)
            | {
                tp: ctx.refusal(AclOperation.READ, ResourceType.TOPIC)
                for tp in partitions
                if tp.topic not in readable
            }
        )
    return {
        "error_code": error,
        "throttle_time_ms": 0,
        "topics": [
            {"name": name, "partitions": [{"partition_index": p, "error_code": e} for p, e in entries]}
            for name, entries in by_topic(errors).items()
        ],
    }
