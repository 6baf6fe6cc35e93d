"""AlterPartitionReassignments: a partition's replicas become the registered brokers asked for,
complete at once (one copy of the data: nothing to move; shim.testbroker.cluster records them and hands
the leadership to one of them). Anything else is refused as a KRaft controller refuses it
(ReplicationControlManager.alterPartitionReassignment and validateManualPartitionAssignment):
an empty list, a broker that is not registered, a broker named twice; with v1's
allow_replication_factor_change false, a replica count other than the partition's
(validatePartitionReplicationFactorUnchanged). Nothing is ever in progress, so a cancellation
(null replicas) is NO_REASSIGNMENT_IN_PROGRESS.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.protocol.messages.alter_partition_reassignments import API
from kafka_shim.shim.context import RequestContext
from kafka_shim.shim.controller.placement import check_replica_list
from kafka_shim.shim.security.authorizer import CLUSTER_NAME, AclOperation, ResourceType
from kafka_shim.storage.errors import StorageError

if TYPE_CHECKING:  # the views exist for the type checker (protocol.viewgen)
    from kafka_shim.protocol.views.alter_partition_reassignments import AlterPartitionReassignmentsRequestData

__all__ = ["API", "handle"]


def _reassign(
    ctx: RequestContext, topic: str, requested: Any, allow_rf_change: bool
) -> tuple[ErrorCode, str | None]:
    found = ctx.broker.topics.get(topic)
    if found is None:
        return ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, f"Unable to find a topic named {topic}."
    if found.partition(requested.partition_index) is None:
        return (
            ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
            f"Unable to find partition {topic}:{requested.partition_index}.",
        )
    if requested.replicas is None:
        return ErrorCode.NO_REASSIGNMENT_IN_PROGRESS, None
    cluster = ctx.broker.cluster
    try:
        check_replica_list(requested.replicas, cluster.registered(), None)
    except StorageError as exc:
        return exc.code, exc.message
    current = len(cluster.replicas(topic, requested.partition_index))
    if not allow_rf_change and current != len(requested.replicas):
        return (
            ErrorCode.INVALID_REPLICATION_FACTOR,
            f"The replication factor is changed from {current} to {len(requested.replicas)}",
        )
    try:
        cluster.reassign(topic, requested.partition_index, list(requested.replicas))
    except StorageError as exc:
        return exc.code, exc.message
    return ErrorCode.NONE, None


def _responses(request: AlterPartitionReassignmentsRequestData, answer: Any) -> list[dict[str, Any]]:
    responses = []
    for t in request.topics:
        partitions = []
        for p in t.partitions:
            code, message = answer(t.name, p)
            partitions.append(
                {"partition_index": p.partition_index, "error_code": code, "error_message": message}
            )
        responses.append({"name": t.name, "partitions": partitions})
    return responses


async def handle(ctx: RequestContext, request: AlterPartitionReassignmentsRequestData) -> dict[str, Any]:
    allow_rf_change = ctx.api_version < 1 or request.allow_replication_factor_change
    code = ctx.denial(AclOperation.ALTER, ResourceType.CLUSTER, CLUSTER_NAME)
    if code is not None:
        # Kafka's getErrorResponse: the refusal at the top and on every partition (and
        # allow_replication_factor_change left at its default).
        denial = code, f"Request {API.name} is not authorized."
        return {
            "throttle_time_ms": 0,
            "error_code": denial[0],
            "error_message": denial[1],
            "responses": _responses(request, lambda topic, partition: denial),
        }
    return {
        "throttle_time_ms": 0,
        "allow_replication_factor_change": allow_rf_change,  # echoed, as Kafka's controller does
        "error_code": ErrorCode.NONE,
        "error_message": None,
        "responses": _responses(
            request, lambda topic, partition: _reassign(ctx, topic, partition, allow_rf_change)
        ),
    }
