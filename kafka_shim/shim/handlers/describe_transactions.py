"""DescribeTransactions: state, timeout, start, producer and partitions of each id."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.protocol.messages.describe_transactions import API
from kafka_shim.protocol.messages.find_coordinator import TRANSACTION_KEY_TYPE
from kafka_shim.shim.context import RequestContext
from kafka_shim.shim.coordinator.types import by_topic
from kafka_shim.shim.security.authorizer import AclOperation, ResourceType

if TYPE_CHECKING:  # the views exist for the type checker (protocol.viewgen)
    from kafka_shim.protocol.views.describe_transactions import DescribeTransactionsRequestData

__all__ = ["API", "handle"]


def _describe(ctx: RequestContext, transactional_id: str) -> dict[str, Any]:
    denial = ctx.denial(AclOperation.DESCRIBE, ResourceType.TRANSACTIONAL_ID, transactional_id)
    coordinated = denial is None and ctx.coordinates(TRANSACTION_KEY_TYPE, transactional_id)
    described = ctx.broker.transactions.describe(transactional_id) if coordinated else None
    if described is None:
        return {
            "error_code": denial
            if denial is not None
            else ErrorCode.NOT_COORDINATOR
            if not coordinated
            else ErrorCode.INVALID_REQUEST
            if not transactional_id
            else ErrorCode.TRANSACTIONAL_ID_NOT_FOUND,
            "transactional_id": transactional_id,
            # the rest at the schema's defaults ("", 0), as Kafka's TransactionState leaves them
        }
    # Only the topics the principal may DESCRIBE are shown, as Kafka filters them.
    partitions = by_topic(dict.fromkeys(described.partitions, None))
    shown = ctx.authorized_names(AclOperation.DESCRIBE, ResourceType.TOPIC, partitions, log_denied=False)
    return {
        "error_code": ErrorCode.NONE,
        "transactional_id": transactional_id,
        "transaction_state": described.state.kafka_name,
        "transaction_timeout_ms": described.timeout_ms,
        "transaction_start_time_ms": described.start_ms,
        "producer_id": described.producer_id,
        "producer_epoch": described.producer_epoch,
        "topics": [
            {"topic": topic, "partitions": sorted(p for p, _ in entries)}
            for topic, entries in sorted(partitions.items())
            if topic in shown
        ],
    }


async def handle(ctx: RequestContext, request: DescribeTransactionsRequestData) -> dict[str, Any]:
    return {
        "throttle_time_ms": 0,
        "transaction_states": [_describe(ctx, t) for t in request.transactional_ids],
    }
