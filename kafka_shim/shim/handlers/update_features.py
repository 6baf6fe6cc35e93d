"""UpdateFeatures: change finalized feature levels within the supported ranges, validated
as Kafka's FeatureControlManager does (shim.controller.features); ALTER on the cluster, as Kafka's
controller authorizes it. A transaction.version change switches the transaction protocol
the broker serves; group.version switches the consumer group protocol on or off.

All or nothing since KRaft: the first refused update is the answer, top-level, and no level
changes; v2 (Kafka 4.0) answers only that top-level error."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.protocol.messages.update_features import API, SAFE_DOWNGRADE, UPGRADE
from kafka_shim.shim.context import RequestContext
from kafka_shim.shim.security.authorizer import CLUSTER_NAME, AclOperation, ResourceType

if TYPE_CHECKING:  # the views exist for the type checker (protocol.viewgen)
    from kafka_shim.protocol.views.update_features import UpdateFeaturesRequestData

__all__ = ["API", "handle"]


def _answer(code: ErrorCode, message: str | None, features: list[str]) -> dict[str, Any]:
    """Kafka's UpdateFeaturesResponse.createWithErrors: one top-level error; the per-feature
    results (v0-1 only: v2 dropped them) list each feature only when the request succeeded."""
    results = [{"feature": f, "error_code": ErrorCode.NONE, "error_message": None} for f in features]
    return {
        "throttle_time_ms": 0,
        "error_code": code,
        "error_message": message,
        "results": results if code == ErrorCode.NONE else [],
    }


async def handle(ctx: RequestContext, request: UpdateFeaturesRequestData) -> dict[str, Any]:
    denial = ctx.denial(AclOperation.ALTER, ResourceType.CLUSTER, CLUSTER_NAME)
    if denial is not None:
        return _answer(denial, None, [])
    updates = {
        # v0 says allow_downgrade where v1 says upgrade_type.
        u.feature: (
            u.max_version_level,
            u.upgrade_type if ctx.api_version >= 1 else SAFE_DOWNGRADE if u.allow_downgrade else UPGRADE,
        )
        for u in request.feature_updates
    }
    try:
        refusal = ctx.broker.features.update(updates, ctx.api_version >= 1 and request.validate_only)
    except OSError as exc:  # features.json not written (a full disk): no level changed
        return _answer(ErrorCode.KAFKA_STORAGE_ERROR, f"cannot write the feature levels: {exc}", [])
    if refusal is not None:
        return _answer(refusal.code, refusal.message, [])
    return _answer(ErrorCode.NONE, None, list(updates))
