"""DescribeCluster: the admin client's view of this single-broker cluster."""

from __future__ import annotations

from typing import Any

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.protocol.messages.describe_cluster import API, ENDPOINT_TYPE_BROKER
from kafka_shim.protocol.messages.metadata import AUTHORIZED_OPERATIONS_OMITTED, CLUSTER_OPERATIONS
from kafka_shim.shim.context import RequestContext

__all__ = ["API", "handle"]


async def handle(ctx: RequestContext, request: Any) -> dict[str, Any]:
    broker = ctx.broker
    host, port = ctx.advertised_address()  # the listener's this request arrived on, as in Kafka
    answer: dict[str, Any] = {
        "throttle_time_ms": 0,
        "endpoint_type": request.endpoint_type,
        "cluster_id": broker.cluster_id,
        "controller_id": broker.node_id,
    }
    if request.endpoint_type != ENDPOINT_TYPE_BROKER:
        # A Kafka broker answers controller-endpoint requests this way.
        return answer | {
            "error_code": ErrorCode.UNSUPPORTED_ENDPOINT_TYPE,
            "error_message": "this is a broker endpoint",
            "brokers": [],
        }
    operations = (
        CLUSTER_OPERATIONS if request.include_cluster_authorized_operations else AUTHORIZED_OPERATIONS_OMITTED
    )
    return answer | {
        "error_code": ErrorCode.NONE,
        "brokers": [{"broker_id": broker.node_id, "host": host, "port": port}],
        "cluster_authorized_operations": operations,
    }
