"""ElectLeaders: this broker is every partition's only replica, its preferred leader and its
leader, so no election is ever needed: ELECTION_NOT_NEEDED for each partition named, as a
KRaft controller answers (ReplicationControlManager.electLeaders). Asked for every partition
(null), Kafka leaves out those needing none: each topic comes back with no partition.
"""

from __future__ import annotations

from typing import Any

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.protocol.messages.elect_leaders import API, ElectionType
from kafka_shim.shim.authorizer import CLUSTER_NAME, AclOperation, ResourceType
from kafka_shim.shim.context import RequestContext

__all__ = ["API", "handle"]

_NOT_NEEDED = "Leader election not needed for topic partition."


def _elect(ctx: RequestContext, topic: str, partition: int) -> dict[str, Any]:
    found = ctx.broker.topics.get(topic)
    if found is None:
        code, message = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, f"No such topic as {topic}"
    elif found.partition(partition) is None:
        code, message = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, f"No such partition as {topic}-{partition}"
    else:
        code, message = ErrorCode.ELECTION_NOT_NEEDED, _NOT_NEEDED
    return {"partition_id": partition, "error_code": code, "error_message": message}


def _failed(request: Any, code: ErrorCode, message: str) -> dict[str, Any]:
    """Kafka's ElectLeadersRequest.getErrorResponse: the error on every partition named."""
    results = [
        {
            "topic": t.topic,
            "partition_result": [
                {"partition_id": p, "error_code": code, "error_message": message} for p in t.partitions
            ],
        }
        for t in request.topic_partitions or ()
    ]
    return {"throttle_time_ms": 0, "error_code": code, "replica_election_results": results}


async def handle(ctx: RequestContext, request: Any) -> dict[str, Any]:
    denial = ctx.denial(AclOperation.ALTER, ResourceType.CLUSTER, CLUSTER_NAME)
    if denial is not None:
        return _failed(request, denial, f"Request {API.name} is not authorized.")
    if request.election_type not in tuple(ElectionType):
        return _failed(request, ErrorCode.INVALID_REQUEST, f"Unknown election type {request.election_type}")
    results: list[dict[str, Any]]
    if request.topic_partitions is None:
        results = [{"topic": t.name, "partition_result": []} for t in ctx.broker.topics]
    else:
        results = [
            {"topic": t.topic, "partition_result": [_elect(ctx, t.topic, p) for p in t.partitions]}
            for t in request.topic_partitions
        ]
    return {"throttle_time_ms": 0, "error_code": ErrorCode.NONE, "replica_election_results": results}
