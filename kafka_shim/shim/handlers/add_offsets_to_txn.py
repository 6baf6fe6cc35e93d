"""AddOffsetsToTxn: the group's `__consumer_offsets` partition joins the transaction,
so its transactional offset commits get the transaction's marker."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.protocol.messages.add_offsets_to_txn import API
from kafka_shim.protocol.messages.find_coordinator import TRANSACTION_KEY_TYPE
from kafka_shim.shim.context import RequestContext
from kafka_shim.shim.coordinator.types import TopicPartition
from kafka_shim.shim.effects import coordinator_error
from kafka_shim.shim.handlers.add_partitions_to_txn import client_error
from kafka_shim.shim.security.authorizer import AclOperation, ResourceType
from kafka_shim.storage.errors import StorageError
from kafka_shim.storage.offsets_log import OFFSETS_TOPIC

if TYPE_CHECKING:  # the views exist for the type checker (protocol.viewgen)
    from kafka_shim.protocol.views.add_offsets_to_txn import AddOffsetsToTxnRequestData

__all__ = ["API", "handle"]


async def handle(ctx: RequestContext, request: AddOffsetsToTxnRequestData) -> dict[str, Any]:
    denial = ctx.denial(AclOperation.WRITE, ResourceType.TRANSACTIONAL_ID, request.transactional_id)
    denial = denial or ctx.denial(AclOperation.READ, ResourceType.GROUP, request.group_id)
    if denial is not None:
        return {"throttle_time_ms": 0, "error_code": denial}
    if not ctx.coordinates(TRANSACTION_KEY_TYPE, request.transactional_id):
        return {"throttle_time_ms": 0, "error_code": ErrorCode.NOT_COORDINATOR}
    broker = ctx.broker
    partition = TopicPartition(
        OFFSETS_TOPIC, broker.group_service.offsets_log.partition_for(request.group_id)
    )
    try:
        code = broker.transactions.add_partitions(
            request.transactional_id,
            request.producer_id,
            request.producer_epoch,
            [partition],
            0,
            ctx.now_ms(),
        )
    except StorageError as exc:
        code = coordinator_error(exc.code)
    return {"throttle_time_ms": 0, "error_code": client_error(code, ctx.api_version)}
