"""ListPartitionReassignments: a reassignment onto this broker completes as it is made, so
none is ever in progress: the list is empty, whichever topics are asked for (Kafka lists
only partitions being reassigned and skips unknown topics)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.protocol.messages.list_partition_reassignments import API
from kafka_shim.shim.context import RequestContext
from kafka_shim.shim.security.authorizer import CLUSTER_NAME, AclOperation, ResourceType

if TYPE_CHECKING:  # the views exist for the type checker (protocol.viewgen)
    from kafka_shim.protocol.views.list_partition_reassignments import ListPartitionReassignmentsRequestData

__all__ = ["API", "handle"]


async def handle(ctx: RequestContext, request: ListPartitionReassignmentsRequestData) -> dict[str, Any]:
    denial = ctx.denial(AclOperation.DESCRIBE, ResourceType.CLUSTER, CLUSTER_NAME)
    if denial is not None:
        # Kafka's getErrorResponse: each partition asked for, with nothing but its index.
        asked = [
            {"name": t.name, "partitions": [{"partition_index": p} for p in t.partition_indexes]}
            for t in request.topics or ()
        ]
        return {
            "throttle_time_ms": 0,
            "error_code": denial,
            "error_message": f"Request {API.name} is not authorized.",
            "topics": asked,
        }
    return {"throttle_time_ms": 0, "error_code": ErrorCode.NONE, "error_message": None, "topics": []}
