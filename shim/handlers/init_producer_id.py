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
from kafka_shim.shim.context import RequestContext

__all__ = ["API", "handle"]


def _refusal(code: ErrorCode) -> dict[str, Any]:
    return {"throttle_time_ms": 0, "error_code": code, "producer_id": -1, "producer_epoch": -1}


async def handle(ctx: RequestContext, request: Any) -> dict[str, Any]:
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
