"""InitProducerId: producer ids for idempotent producers, and for transactional ones
through the transaction coordinator (epoch bumps, fencing, KIP-360 recovery)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.protocol.messages.find_coordinator import TRANSACTION_KEY_TYPE
from kafka_shim.protocol.messages.init_producer_id import API
from kafka_shim.shim.context import RequestContext
from kafka_shim.shim.effects import coordinator_error
from kafka_shim.shim.security.authorizer import CLUSTER_NAME, AclOperation, ResourceType
from kafka_shim.shim.transactions.state import NO_PRODUCER_EPOCH, NO_PRODUCER_ID
from kafka_shim.storage.errors import StorageError

if TYPE_CHECKING:  # the views exist for the type checker (protocol.viewgen)
    from kafka_shim.protocol.views.init_producer_id import InitProducerIdRequestData

__all__ = ["API", "handle"]

# PRODUCER_FENCED exists from v4; older producers know it as INVALID_PRODUCER_EPOCH.
FIRST_VERSION_WITH_PRODUCER_FENCED = 4


def _answer(
    code: ErrorCode, producer_id: int = NO_PRODUCER_ID, epoch: int = NO_PRODUCER_EPOCH
) -> dict[str, Any]:
    return {"throttle_time_ms": 0, "error_code": code, "producer_id": producer_id, "producer_epoch": epoch}


def _denial(ctx: RequestContext, transactional_id: str | None) -> ErrorCode:
    """WRITE on the transactional id; without one IDEMPOTENT_WRITE on the cluster, which
    WRITE on any topic also grants (Kafka's authorizeByResourceType)."""
    if transactional_id is not None:
        return (
            ctx.denial(AclOperation.WRITE, ResourceType.TRANSACTIONAL_ID, transactional_id) or ErrorCode.NONE
        )
    cluster = ctx.authorized_names(
        AclOperation.IDEMPOTENT_WRITE, ResourceType.CLUSTER, (CLUSTER_NAME,), log_denied=False
    )
    if cluster or ctx.authorize_any(AclOperation.WRITE, ResourceType.TOPIC):
        return ErrorCode.NONE
    return ctx.refusal(AclOperation.IDEMPOTENT_WRITE, ResourceType.CLUSTER)


async def handle(ctx: RequestContext, request: InitProducerIdRequestData) -> dict[str, Any]:
    denied = _denial(ctx, request.transactional_id)
    if denied != ErrorCode.NONE:
        return _answer(denied)
    if request.transactional_id is None:
        # Without a transactional id Kafka always hands out a fresh id at epoch 0,
        # whatever producer id and epoch (v3+) the request carries.
        return _answer(ErrorCode.NONE, ctx.broker.producer_ids.allocate(), 0)
    if not ctx.coordinates(TRANSACTION_KEY_TYPE, request.transactional_id):
        return _answer(ErrorCode.NOT_COORDINATOR)
    held = (request.producer_id, request.producer_epoch)
    if held == (NO_PRODUCER_ID, NO_PRODUCER_EPOCH):
        expected = None
    elif NO_PRODUCER_ID in held[:1] or held[1] == NO_PRODUCER_EPOCH:
        return _answer(ErrorCode.INVALID_REQUEST)
    else:
        expected = held
    now = ctx.now_ms()
    try:
        result = ctx.broker.transactions.init_producer_id(
            request.transactional_id, request.transaction_timeout_ms, expected, now
        )
    except StorageError as exc:
        return _answer(coordinator_error(exc.code))
    code = result.error
    if code == ErrorCode.PRODUCER_FENCED and ctx.api_version < FIRST_VERSION_WITH_PRODUCER_FENCED:
        code = ErrorCode.INVALID_PRODUCER_EPOCH
    return _answer(code, result.producer_id, result.producer_epoch)
