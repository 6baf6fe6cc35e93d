"""DescribeClientQuotas: the quotas of the entities a filter matches, as Kafka's
ClientQuotaCache answers; DESCRIBE_CONFIGS on the cluster, as KafkaApis authorizes it."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.protocol.messages.describe_client_quotas import API
from kafka_shim.shim.context import RequestContext
from kafka_shim.shim.quotas.client_quotas import QuotaFilterError
from kafka_shim.shim.security.authorizer import CLUSTER_NAME, AclOperation, ResourceType

if TYPE_CHECKING:  # the views exist for the type checker (protocol.viewgen)
    from kafka_shim.protocol.views.describe_client_quotas import DescribeClientQuotasRequestData

__all__ = ["API", "handle"]


def _refused(code: ErrorCode, message: str | None) -> dict[str, Any]:
    return {"throttle_time_ms": 0, "error_code": code, "error_message": message, "entries": None}


async def handle(ctx: RequestContext, request: DescribeClientQuotasRequestData) -> dict[str, Any]:
    denial = ctx.denial(AclOperation.DESCRIBE_CONFIGS, ResourceType.CLUSTER, CLUSTER_NAME)
    if denial is not None:
        return _refused(denial, None)
    components = [(c.entity_type, c.match_type, c.match) for c in request.components]
    try:
        found = ctx.broker.client_quotas.store.describe(components, request.strict)
    except QuotaFilterError as exc:
        return _refused(exc.refusal.code, exc.refusal.message)
    return {
        "throttle_time_ms": 0,
        "error_code": ErrorCode.NONE,
        "entries": [
            {
                "entity": [{"entity_type": kind, "entity_name": name} for kind, name in entity],
                "values": [{"key": key, "value": value} for key, value in sorted(values.items())],
            }
            for entity, values in found.items()
        ],
    }
