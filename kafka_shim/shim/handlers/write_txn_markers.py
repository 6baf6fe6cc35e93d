"""WriteTxnMarkers: write COMMIT/ABORT markers for the transactions named, through
the one marker path the transaction coordinator uses too (`shim.transactions.markers`).
The admin client's abortTransaction sends it with what DescribeProducers reported."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.protocol.messages.write_txn_markers import API
from kafka_shim.shim.context import RequestContext
from kafka_shim.shim.coordinator.types import TopicPartition
from kafka_shim.shim.security.authorizer import CLUSTER_NAME, AclOperation, ResourceType
from kafka_shim.shim.transactions.markers import write_markers

if TYPE_CHECKING:  # the views exist for the type checker (protocol.viewgen)
    from kafka_shim.protocol.views.write_txn_markers import (
        WriteTxnMarkersRequestData,
        WriteTxnMarkersRequestMarkers,
    )

__all__ = ["API", "handle"]


def _write(
    ctx: RequestContext, marker: WriteTxnMarkersRequestMarkers, denial: ErrorCode | None
) -> dict[str, Any]:
    partitions = [TopicPartition(t.name, index) for t in marker.topics for index in t.partition_indexes]
    if denial is not None:
        results = dict.fromkeys(partitions, denial)
    else:
        results = write_markers(
            ctx.broker,
            marker.producer_id,
            marker.producer_epoch,
            marker.coordinator_epoch,
            marker.transaction_result,
            partitions,
            ctx.now_ms(),
            marker.transaction_version,  # v2 (Kafka 4.2); 0 (legacy) before
        )
    by_topic: dict[str, list[dict[str, Any]]] = {}
    for partition in partitions:
        code: ErrorCode = results[partition]
        by_topic.setdefault(partition.topic, []).append(
            {"partition_index": partition.partition, "error_code": code}
        )
    return {
        "producer_id": marker.producer_id,
        "topics": [{"name": name, "partitions": answers} for name, answers in by_topic.items()],
    }


async def handle(ctx: RequestContext, request: WriteTxnMarkersRequestData) -> dict[str, Any]:
    # Brokers send it to each other: Kafka asks CLUSTER_ACTION on the cluster, and refuses
    # every partition of the request without it.
    denial = ctx.denial(AclOperation.CLUSTER_ACTION, ResourceType.CLUSTER, CLUSTER_NAME)
    return {"markers": [_write(ctx, marker, denial) for marker in request.markers]}
