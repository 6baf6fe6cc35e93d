"""ListTransactions: the transactions held here, filtered by state, producer id, (v1+) how
long they have been running and (v2+) a pattern the whole transactional id matches (Kafka's
TransactionStateManager.listTransactionStates: Pattern.matcher(id).matches(); Python's `re`
reads the patterns clients send as Java's Pattern does)."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.protocol.messages.find_coordinator import TRANSACTION_KEY_TYPE
from kafka_shim.protocol.messages.list_transactions import API
from kafka_shim.shim.context import RequestContext
from kafka_shim.shim.security.authorizer import AclOperation, ResourceType

if TYPE_CHECKING:  # the views exist for the type checker (protocol.viewgen)
    from kafka_shim.protocol.views.list_transactions import ListTransactionsRequestData

__all__ = ["API", "handle"]


def _refused(code: ErrorCode) -> dict[str, Any]:
    return {"throttle_time_ms": 0, "error_code": code, "unknown_state_filters": [], "transaction_states": []}


async def handle(ctx: RequestContext, request: ListTransactionsRequestData) -> dict[str, Any]:
    pattern = None
    if request.transactional_id_pattern:  # null (and before v2) or empty: no filter
        try:
            pattern = re.compile(request.transactional_id_pattern)
        except re.error:
            return _refused(ErrorCode.INVALID_REGULAR_EXPRESSION)  # the response has no message
    listings, unknown = ctx.broker.transactions.list_transactions(
        request.state_filters, set(request.producer_id_filters), request.duration_filter, ctx.now_ms()
    )
    # Only the transactional ids the principal may DESCRIBE are listed, unlogged, as in Kafka.
    described = ctx.authorized_names(
        AclOperation.DESCRIBE,
        ResourceType.TRANSACTIONAL_ID,
        (t.transactional_id for t in listings),
        log_denied=False,
    )
    # Each broker lists the transactional ids it coordinates (shim.testbroker.cluster), as in Kafka.
    listings = [
        t
        for t in listings
        if t.transactional_id in described
        and ctx.coordinates(TRANSACTION_KEY_TYPE, t.transactional_id)
        and (pattern is None or pattern.fullmatch(t.transactional_id))
    ]
    return {
        "throttle_time_ms": 0,
        "error_code": ErrorCode.NONE,
        "unknown_state_filters": unknown,
        "transaction_states": [
            {
                "transactional_id": t.transactional_id,
                "producer_id": t.producer_id,
                "transaction_state": t.state.kafka_name,
            }
            for t in listings
        ],
    }
