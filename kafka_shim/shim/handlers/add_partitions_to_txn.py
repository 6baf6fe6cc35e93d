"""AddPartitionsToTxn: v0-3 a client adds partitions to its transaction; v4+ batch
transactions, and `verify_only` asks whether partitions are in them (what a broker
asks before a transactional append)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.protocol.messages.add_partitions_to_txn import API
from kafka_shim.protocol.messages.find_coordinator import TRANSACTION_KEY_TYPE
from kafka_shim.protocol.releases import TV2
from kafka_shim.shim.context import RequestContext
from kafka_shim.shim.coordinator.types import TopicPartition, by_topic
from kafka_shim.shim.effects import coordinator_error
from kafka_shim.shim.security.authorizer import CLUSTER_NAME, AclOperation, ResourceType
from kafka_shim.storage.errors import StorageError
from kafka_shim.storage.offsets_log import OFFSETS_TOPIC

if TYPE_CHECKING:  # the views exist for the type checker (protocol.viewgen)
    from kafka_shim.protocol.views.add_partitions_to_txn import AddPartitionsToTxnRequestData

__all__ = ["API", "client_error", "handle"]

FIRST_BATCHED_VERSION = 4
FIRST_TV2_ADD_VERSION = 5


def client_error(code: ErrorCode, version: int) -> ErrorCode:
    """PRODUCER_FENCED is known to v2+ of the transaction APIs (AddPartitionsToTxn,
    AddOffsetsToTxn, EndTxn); older clients know it as INVALID_PRODUCER_EPOCH."""
    return ErrorCode.INVALID_PRODUCER_EPOCH if code == ErrorCode.PRODUCER_FENCED and version < 2 else code


def _partitions(topics: Iterable[Any]) -> list[TopicPartition]:
    return [TopicPartition(topic.name, p) for topic in topics for p in topic.partitions]


def _results(errors: dict[TopicPartition, ErrorCode]) -> list[dict[str, Any]]:
    return [
        {
            "name": name,
            "results_by_partition": [
                {"partition_index": p, "partition_error_code": e} for p, e in partitions
            ],
        }
        for name, partitions in by_topic(errors).items()
    ]


def _add(
    ctx: RequestContext,
    transactional_id: str,
    producer_id: int,
    epoch: int,
    topics: Iterable[Any],
    verify: bool,
) -> dict[TopicPartition, ErrorCode]:
    partitions = _partitions(topics)
    # A client's request (v0-3) needs WRITE on its transactional id; brokers' (v4+) were
    # authorized as a whole in `handle`.
    if ctx.api_version < FIRST_BATCHED_VERSION and (
        denial := ctx.denial(AclOperation.WRITE, ResourceType.TRANSACTIONAL_ID, transactional_id)
    ):
        return dict.fromkeys(partitions, denial)
    if not ctx.coordinates(TRANSACTION_KEY_TYPE, transactional_id):
        return dict.fromkeys(partitions, ErrorCode.NOT_COORDINATOR)
    coordinator = ctx.broker.transactions
    if verify:
        return {
            tp: coordinator.verify_partition(transactional_id, producer_id, epoch, tp) for tp in partitions
        }
    # Kafka checks WRITE on the topics and that the partitions exist first: those refused or
    # unknown are named, the rest not attempted.
    writable = ctx.authorized_names(AclOperation.WRITE, ResourceType.TOPIC, {tp.topic for tp in partitions})
    refused = {tp for tp in partitions if tp.topic not in writable}
    unknown = {tp for tp in partitions if not _exists(ctx, tp)}
    if refused or unknown:
        return {
            tp: ctx.refusal(AclOperation.WRITE, ResourceType.TOPIC)
            if tp in refused
            else ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
            if tp in unknown
            else ErrorCode.OPERATION_NOT_ATTEMPTED
            for tp in partitions
        }
    try:
        # v5 comes from a partition leader adding a transaction-version-2 producer's partitions
        # as it appends (KIP-890 part 2); v0-3 from transaction-version-0/1 clients.
        client_version = TV2 if ctx.api_version >= FIRST_TV2_ADD_VERSION else 0
        code = coordinator.add_partitions(
            transactional_id, producer_id, epoch, partitions, client_version, ctx.now_ms()
        )
    except StorageError as exc:
        code = coordinator_error(exc.code)
    return {tp: client_error(code, ctx.api_version) for tp in partitions}


def _exists(ctx: RequestContext, tp: TopicPartition) -> bool:
    """A partition of a topic here, or of `__consumer_offsets` by its partition count: a group
    coordinator of --process-per-broker adds its partition to a transaction (v5) whose
    coordinator's process may not have made its own copy of the topic yet."""
    if tp.topic == OFFSETS_TOPIC:
        return 0 <= tp.partition < ctx.broker.group_service.offsets_log.partitions
    return ctx.broker.topics.partition(tp.topic, tp.partition) is not None


async def handle(ctx: RequestContext, request: AddPartitionsToTxnRequestData) -> dict[str, Any]:
    if ctx.api_version < FIRST_BATCHED_VERSION:
        errors = _add(
            ctx,
            request.v3_and_below_transactional_id,
            request.v3_and_below_producer_id,
            request.v3_and_below_producer_epoch,
            request.v3_and_below_topics,
            verify=False,
        )
        return {"throttle_time_ms": 0, "results_by_topic_v3_and_below": _results(errors)}
    denial = ctx.denial(AclOperation.CLUSTER_ACTION, ResourceType.CLUSTER, CLUSTER_NAME)
    if denial is not None:  # v4+ is sent by brokers verifying a Produce: Kafka asks CLUSTER_ACTION
        return {"throttle_time_ms": 0, "error_code": denial}
    results = [
        {
            "transactional_id": txn.transactional_id,
            "topic_results": _results(
                _add(
                    ctx,
                    txn.transactional_id,
                    txn.producer_id,
                    txn.producer_epoch,
                    txn.topics,
                    txn.verify_only,
                )
            ),
        }
        for txn in request.transactions
    ]
    return {"throttle_time_ms": 0, "error_code": ErrorCode.NONE, "results_by_transaction": results}
