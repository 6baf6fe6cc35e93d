"""ListConfigResources (ListClientMetricsResources in Kafka 3.9): the config resources the
broker keeps, to a principal that may DESCRIBE_CONFIGS the cluster. v0 lists client-metrics
resources, which this broker keeps none of (it takes no client telemetry, KIP-714), so its
answer is empty; v1 (KIP-1142) lists groups with configs, client metrics, broker loggers and
brokers (one per broker) and topics, or those of the types asked for, in that order; a type it
does not list answers UNSUPPORTED_VERSION for the whole request."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.protocol.messages.describe_configs import ResourceType as ConfigResource
from kafka_shim.protocol.messages.list_config_resources import API, CLIENT_METRICS
from kafka_shim.shim.context import RequestContext
from kafka_shim.shim.security.authorizer import CLUSTER_NAME, AclOperation, ResourceType

if TYPE_CHECKING:  # the views exist for the type checker (protocol.viewgen)
    from kafka_shim.protocol.views.list_config_resources import ListConfigResourcesRequestData

__all__ = ["API", "handle"]

# The ConfigResource.Type codes v1 lists, in the order it lists them.
LISTED_TYPES = (
    ConfigResource.GROUP,
    CLIENT_METRICS,
    ConfigResource.BROKER_LOGGER,
    ConfigResource.BROKER,
    ConfigResource.TOPIC,
)


def _names(ctx: RequestContext, resource_type: int) -> list[str]:
    broker = ctx.broker
    if resource_type == ConfigResource.TOPIC:
        return sorted(topic.name for topic in broker.topics)
    if resource_type in (ConfigResource.BROKER, ConfigResource.BROKER_LOGGER):
        return [str(node_id) for node_id in broker.cluster.registered()]
    if resource_type == ConfigResource.GROUP:
        return sorted(broker.group_configs)
    return []  # CLIENT_METRICS: none kept


async def handle(ctx: RequestContext, request: ListConfigResourcesRequestData) -> dict[str, Any]:
    answer: dict[str, Any] = {"throttle_time_ms": 0, "config_resources": []}
    denial = ctx.denial(AclOperation.DESCRIBE_CONFIGS, ResourceType.CLUSTER, CLUSTER_NAME)
    if denial is not None:
        return answer | {"error_code": denial}
    types = list(request.resource_types) if ctx.api_version >= 1 else [CLIENT_METRICS]
    if any(t not in LISTED_TYPES for t in types):
        return answer | {"error_code": ErrorCode.UNSUPPORTED_VERSION}
    resources = [
        {"resource_name": name, "resource_type": resource_type}
        for resource_type in LISTED_TYPES
        if not types or resource_type in types
        for name in _names(ctx, resource_type)
    ]
    return answer | {"error_code": ErrorCode.NONE, "config_resources": resources}
