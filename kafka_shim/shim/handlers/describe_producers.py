"""DescribeProducers: each partition's producers (idempotent and transactional) with
their epoch, last sequence and timestamp, the coordinator epoch of their last marker
and the first offset of their open transaction, as Kafka's ProducerStateManager
reports them (`kafka-transactions describe-producers`, Admin.describeProducers)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.protocol.messages.describe_producers import API
from kafka_shim.shim.context import RequestContext
from kafka_shim.shim.security.authorizer import AclOperation, ResourceType
from kafka_shim.storage.topics import Topic

if TYPE_CHECKING:  # the views exist for the type checker (protocol.viewgen)
    from kafka_shim.protocol.views.describe_producers import DescribeProducersRequestData

__all__ = ["API", "handle"]

NO_TXN_START_OFFSET = -1


def _describe(topic: Topic | None, index: int) -> dict[str, Any]:
    log = topic.partition(index) if topic is not None else None
    if log is None:
        return {
            "partition_index": index,
            "error_code": ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
            # Kafka's message for a topic its metadata lacks; none for a missing partition
            "error_message": ErrorCode.UNKNOWN_TOPIC_OR_PARTITION.default_message if topic is None else None,
            "active_producers": [],
        }
    producers = [
        {
            "producer_id": producer_id,
            "producer_epoch": entry.epoch,
            "last_sequence": entry.last_sequence,
            "last_timestamp": entry.last_timestamp,
            "coordinator_epoch": entry.coordinator_epoch,
            "current_txn_start_offset": (
                NO_TXN_START_OFFSET if entry.txn_first_offset is None else entry.txn_first_offset
            ),
        }
        for producer_id, entry in log.producers
    ]
    return {"partition_index": index, "error_code": ErrorCode.NONE, "active_producers": producers}


def _refused(index: int, code: ErrorCode) -> dict[str, Any]:
    return {
        "partition_index": index,
        "error_code": code,
        "active_producers": [],
    }


async def handle(ctx: RequestContext, request: DescribeProducersRequestData) -> dict[str, Any]:
    topics = ctx.broker.topics
    readable = ctx.authorized_names(AclOperation.READ, ResourceType.TOPIC, (t.name for t in request.topics))
    return {
        "throttle_time_ms": 0,
        "topics": [
            {
                "name": t.name,
                "partitions": [
                    _describe(topics.get(t.name), i)
                    if t.name in readable
                    else _refused(i, ctx.refusal(AclOperation.READ, ResourceType.TOPIC))
                    for i in t.partition_indexes
                ],
            }
            for t in request.topics
        ],
    }
