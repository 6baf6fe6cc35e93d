"""DescribeCluster: the admin client's view of the cluster: the running brokers (shim.testbroker.cluster)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.protocol.messages.describe_cluster import API, ENDPOINT_TYPE_BROKER
from kafka_shim.protocol.messages.metadata import AUTHORIZED_OPERATIONS_OMITTED
from kafka_shim.shim.context import RequestContext
from kafka_shim.shim.handlers.metadata import brokers
from kafka_shim.shim.security.authorizer import CLUSTER_NAME, AclOperation, ResourceType

if TYPE_CHECKING:  # the views exist for the type checker (protocol.viewgen)
    from kafka_shim.protocol.views.describe_cluster import DescribeClusterRequestData

__all__ = ["API", "handle"]


# EndpointType's names, as Kafka's messages print them.
_ENDPOINT_TYPES = {ENDPOINT_TYPE_BROKER: "BROKER", 2: "CONTROLLER"}


def _wrong_endpoint(endpoint_type: int) -> dict[str, Any]:
    """A broker asked for another endpoint type, as Kafka 3.9's computeDescribeClusterResponse
    answers it: the error and nothing else (endpoint type, cluster id and controller at the
    schema's defaults)."""
    if endpoint_type not in _ENDPOINT_TYPES:
        code, message = ErrorCode.UNSUPPORTED_ENDPOINT_TYPE, f"Unsupported endpoint type {endpoint_type}"
    else:
        code = ErrorCode.MISMATCHED_ENDPOINT_TYPE
        message = (
            "The request was sent to an endpoint of type BROKER, but we wanted an endpoint of type "
            f"{_ENDPOINT_TYPES[endpoint_type]}"
        )
    return {"throttle_time_ms": 0, "error_code": code, "error_message": message, "brokers": []}


async def handle(ctx: RequestContext, request: DescribeClusterRequestData) -> dict[str, Any]:
    broker = ctx.broker
    if request.endpoint_type != ENDPOINT_TYPE_BROKER:
        return _wrong_endpoint(request.endpoint_type)
    answer: dict[str, Any] = {
        "throttle_time_ms": 0,
        "endpoint_type": request.endpoint_type,
        "cluster_id": broker.cluster_id,
        "controller_id": broker.cluster.controller_id,
    }
    # Kafka answers the operations of a principal that may not describe the cluster with 0,
    # not with an error.
    operations = AUTHORIZED_OPERATIONS_OMITTED
    if request.include_cluster_authorized_operations:
        operations = 0
        if ctx.authorize(AclOperation.DESCRIBE, ResourceType.CLUSTER, CLUSTER_NAME):
            operations = ctx.authorized_operations(ResourceType.CLUSTER, CLUSTER_NAME)
    return answer | {
        "error_code": ErrorCode.NONE,
        "brokers": [
            {"broker_id": b["node_id"], "host": b["host"], "port": b["port"], "rack": b["rack"]}
            for b in brokers(ctx)
        ],
        "cluster_authorized_operations": operations,
    }
