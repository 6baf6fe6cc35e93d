"""AlterClientQuotas: set or remove quota values, validated as Kafka's controller does
(ClientQuotaControlManager); ALTER_CONFIGS on the cluster, as KafkaApis authorizes it."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.protocol.messages.alter_client_quotas import API
from kafka_shim.shim.context import RequestContext
from kafka_shim.shim.security.authorizer import CLUSTER_NAME, AclOperation, ResourceType

if TYPE_CHECKING:  # the views exist for the type checker (protocol.viewgen)
    from kafka_shim.protocol.views.alter_client_quotas import AlterClientQuotasRequestData

__all__ = ["API", "handle"]


async def handle(ctx: RequestContext, request: AlterClientQuotasRequestData) -> dict[str, Any]:
    denial = ctx.denial(AclOperation.ALTER_CONFIGS, ResourceType.CLUSTER, CLUSTER_NAME)
    if denial is not None:
        results: list[tuple[ErrorCode, str | None]] = [(denial, None) for _ in request.entries]
    else:
        entries = [
            (
                [(part.entity_type, part.entity_name) for part in entry.entity],
                [(op.key, None if op.remove else op.value) for op in entry.ops],
            )
            for entry in request.entries
        ]
        try:
            refusals = ctx.broker.client_quotas.store.alter(entries, request.validate_only)
            results = [(ErrorCode.NONE, None) if r is None else (r.code, r.message) for r in refusals]
        except OSError as exc:  # quotas.json not written (a full disk): nothing changed
            results = [(ErrorCode.KAFKA_STORAGE_ERROR, f"cannot write the quotas: {exc}")] * len(entries)
    return {
        "throttle_time_ms": 0,
        "entries": [
            {
                "error_code": code,
                "error_message": message,
                "entity": [
                    {"entity_type": p.entity_type, "entity_name": p.entity_name} for p in entry.entity
                ],
            }
            for (code, message), entry in zip(results, request.entries, strict=True)
        ],
    }
