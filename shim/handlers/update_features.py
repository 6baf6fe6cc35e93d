"""UpdateFeatures: change finalized feature levels within the supported ranges, validated
as Kafka's FeatureControlManager does (shim.features); ALTER on the cluster, as Kafka's
controller authorizes it. A transaction.version change switches the transaction protocol
the broker serves; group.version switches the consumer group protocol on or off."""

from __future__ import annotations

from typing import Any

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.protocol.messages.update_features import API, SAFE_DOWNGRADE, UPGRADE
from kafka_shim.shim.authorizer import CLUSTER_NAME, AclOperation, ResourceType
from kafka_shim.shim.context import RequestContext

__all__ = ["API", "handle"]


async def handle(ctx: RequestContext, request: Any) -> dict[str, Any]:
    denial = ctx.denial(AclOperation.ALTER, ResourceType.CLUSTER, CLUSTER_NAME)
    if denial is not None:
        return {
            "throttle_time_ms": 0,
            "error_code": denial,
            "error_message": None,
            "results": [],
        }
    updates = {
        # v0 says allow_downgrade where v1 says upgrade_type.
        u.feature: (
            u.max_version_level,
            u.upgrade_type if ctx.api_version >= 1 else SAFE_DOWNGRADE if u.allow_downgrade else UPGRADE,
        )
        for u in request.feature_updates
    }
    try:
        results = ctx.broker.features.update(updates, ctx.api_version >= 1 and request.validate_only)
    except OSError as exc:  # features.json not written (a full disk): no level changed
        return {
            "throttle_time_ms": 0,
            "error_code": ErrorCode.KAFKA_STORAGE_ERROR,
            "error_message": f"cannot write the feature levels: {exc}",
            "results": [],
        }
    return {
        "throttle_time_ms": 0,
        "error_code": ErrorCode.NONE,
        "error_message": None,
        "results": [
            {
                "feature": feature,
                "error_code": ErrorCode.NONE if refusal is None else refusal.code,
                "error_message": None if refusal is None else refusal.message,
            }
            for feature, refusal in results.items()
        ],
    }
