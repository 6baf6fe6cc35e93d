"""InitProducerId: producer ids for idempotent producers.

There is no transaction coordinator. A transactional id gets NOT_COORDINATOR,
which is what a Kafka broker answers for a transactional id whose coordinator
it does not host (TransactionStateManager); TRANSACTIONAL_ID_AUTHORIZATION_FAILED
would claim an authorizer said no, which is not the case.
"""

from __future__ import annotations

from typing import Any

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.protocol.messages.init_producer_id import API
from kafka_shim.shim.authorizer import CLUSTER_NAME, AclOperation, ResourceType
from kafka_shim.shim.context import RequestContext

__all__ = ["API", "handle"]


def _refusal(code: ErrorCode) -> dict[str, Any]:
    return {"throttle_time_ms": 0, "error_code": code, "producer_id": -1, "producer_epoch": -1}


def _denial(ctx: RequestContext, transactional_id: str | None) -> ErrorCode:
    """WRITE on the transactional id; without one IDEMPOTENT_WRITE on the cluster, which
    WRITE on any topic also grants (Kafka's authorizeByResourceType)."""
    if transactional_id is not None:
        allowed = ctx.authorize(AclOperation.WRITE, ResourceType.TRANSACTIONAL_ID, transactional_id)
        return ErrorCode.NONE if allowed else ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED
    cluster = ctx.authorized_names(
        AclOperation.IDEMPOTENT_WRITE, ResourceType.CLUSTER, (CLUSTER_NAME,), log_denied=False
    )
    if cluster or ctx.authorize_any(AclOperation.WRITE, ResourceType.TOPIC):
        return ErrorCode.NONE
    return ErrorCode.CLUSTER_AUTHORIZATION_FAILED


async def handle(ctx: RequestContext, request: Any) -> dict[str, Any]:
    denied = _denial(ctx, request.transactional_id)
    if denied != ErrorCode.NONE:
        return _refusal(denied)
    if request.transactional_id == "":
        return _refusal(ErrorCode.INVALID_REQUEST)  # as Kafka's TransactionCoordinator
    if request.transactional_id is not None:
        return _refusal(ErrorCode.NOT_COORDINATOR)
    # Without a transactional id Kafka always hands out a fresh id at epoch 0,
    # whatever producer id and epoch (v3+) the request carries.
    return {
        "throttle_time_ms": 0,
        "error_code": ErrorCode.NONE,
        "producer_id": ctx.broker.producer_ids.allocate(),
        "producer_epoch": 0,
    }
