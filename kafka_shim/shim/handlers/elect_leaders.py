"""ElectLeaders, as a KRaft controller answers it (ReplicationControlManager.electLeaders), over
the emulated brokers' leaders (shim.testbroker.cluster): a preferred election hands the partition back to
its first replica, ELECTION_NOT_NEEDED when it leads already, PREFERRED_LEADER_NOT_AVAILABLE
when it is stopped; an unclean one is never needed while a replica runs. A single broker is
every partition's preferred leader, so it never elects. Asked for every partition (null),
Kafka leaves out those needing no election.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.protocol.messages.elect_leaders import API, ElectionType
from kafka_shim.shim.context import RequestContext
from kafka_shim.shim.security.authorizer import CLUSTER_NAME, AclOperation, ResourceType

if TYPE_CHECKING:  # the views exist for the type checker (protocol.viewgen)
    from kafka_shim.protocol.views.elect_leaders import ElectLeadersRequestData

__all__ = ["API", "handle"]

# Kafka's messages: its own for ELECTION_NOT_NEEDED, the errors' default ones otherwise.
_MESSAGES = {
    ErrorCode.NONE: None,
    ErrorCode.ELECTION_NOT_NEEDED: "Leader election not needed for topic partition.",
    ErrorCode.PREFERRED_LEADER_NOT_AVAILABLE: "The preferred leader was not available.",
    ErrorCode.ELIGIBLE_LEADERS_NOT_AVAILABLE: "Eligible topic partition leaders are not available.",
}


def _elect(ctx: RequestContext, topic: str, partition: int, election_type: int) -> dict[str, Any]:
    found = ctx.broker.topics.get(topic)
    message: str | None
    if found is None:
        code, message = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, f"No such topic as {topic}"
    elif found.partition(partition) is None:
        code, message = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, f"No such partition as {topic}-{partition}"
    else:
        code = ctx.broker.cluster.elect(topic, partition, unclean=election_type == ElectionType.UNCLEAN)
        message = _MESSAGES[code]
    return {"partition_id": partition, "error_code": code, "error_message": message}


def _failed(request: ElectLeadersRequestData, code: ErrorCode, message: str) -> dict[str, Any]:
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


async def handle(ctx: RequestContext, request: ElectLeadersRequestData) -> dict[str, Any]:
    denial = ctx.denial(AclOperation.ALTER, ResourceType.CLUSTER, CLUSTER_NAME)
    if denial is not None:
        return _failed(request, denial, f"Request {API.name} is not authorized.")
    if request.election_type not in tuple(ElectionType):
        return _failed(request, ErrorCode.INVALID_REQUEST, f"Unknown election type {request.election_type}")
    results: list[dict[str, Any]]
    kind = request.election_type
    if request.topic_partitions is None:
        results = []
        for topic in list(ctx.broker.topics):
            elected = [_elect(ctx, topic.name, p, kind) for p in range(len(topic.partitions))]
            needed = [e for e in elected if e["error_code"] != ErrorCode.ELECTION_NOT_NEEDED]
            results.append({"topic": topic.name, "partition_result": needed})
    else:
        results = [
            {"topic": t.topic, "partition_result": [_elect(ctx, t.topic, p, kind) for p in t.partitions]}
            for t in request.topic_partitions
        ]
    return {"throttle_time_ms": 0, "error_code": ErrorCode.NONE, "replica_election_results": results}
