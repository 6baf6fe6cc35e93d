"""EndTxn: commit or abort. The transition is written to `__transaction_state`, the
markers to every partition of the transaction, and the transaction completed, before
the answer. v5 (transaction version 2) bumps the epoch and answers it."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.protocol.messages.end_txn import API
from kafka_shim.protocol.messages.find_coordinator import TRANSACTION_KEY_TYPE
from kafka_shim.protocol.releases import TV1, TV2
from kafka_shim.shim.context import RequestContext
from kafka_shim.shim.effects import coordinator_error
from kafka_shim.shim.handlers.add_partitions_to_txn import client_error
from kafka_shim.shim.security.authorizer import AclOperation, ResourceType
from kafka_shim.storage.errors import StorageError

if TYPE_CHECKING:  # the views exist for the type checker (protocol.viewgen)
    from kafka_shim.protocol.views.end_txn import EndTxnRequestData

__all__ = ["API", "handle"]

# EndTxn v5 is how a producer says it speaks transaction version 2 (KIP-890 part 2).
FIRST_TV2_VERSION = 5


async def handle(ctx: RequestContext, request: EndTxnRequestData) -> dict[str, Any]:
    denial = ctx.denial(AclOperation.WRITE, ResourceType.TRANSACTIONAL_ID, request.transactional_id)
    if denial is not None:
        return {"throttle_time_ms": 0, "error_code": denial}
    if not ctx.coordinates(TRANSACTION_KEY_TYPE, request.transactional_id):
        return {"throttle_time_ms": 0, "error_code": ErrorCode.NOT_COORDINATOR}
    now = ctx.now_ms()
    client_version = TV2 if ctx.api_version >= FIRST_TV2_VERSION else TV1
    try:
        result = ctx.broker.transactions.end_transaction(
            request.transactional_id,
            request.producer_id,
            request.producer_epoch,
            request.committed,
            client_version,
            now,
        )
    except StorageError as exc:
        return {"throttle_time_ms": 0, "error_code": coordinator_error(exc.code)}
    return {
        "throttle_time_ms": 0,
        "error_code": client_error(result.error, ctx.api_version),
        "producer_id": result.producer_id,
        "producer_epoch": result.producer_epoch,
    }
