"""TxnOffsetCommit: a transactional producer commits a consumer group's offsets inside
its transaction (consume-transform-produce). They stay pending until the transaction
ends, and become the group's committed offsets only if it commits.

Kafka's order of checks: unknown topics and partitions are answered
UNKNOWN_TOPIC_OR_PARTITION and go no further; an empty group id is INVALID_GROUP_ID;
then the transaction must hold the group's `__consumer_offsets` partition (added by
AddOffsetsToTxn), which the transaction coordinator answers; then the group coordinator
fences the member (v3+) and stores the offsets as the producer's.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.protocol.messages.find_coordinator import GROUP_KEY_TYPE
from kafka_shim.protocol.messages.txn_offset_commit import API
from kafka_shim.protocol.releases import TV2
from kafka_shim.shim.context import RequestContext
from kafka_shim.shim.coordinator.types import OffsetCommit, TopicPartition, TxnCommitRequest, by_topic
from kafka_shim.shim.security.authorizer import AclOperation, ResourceType
from kafka_shim.storage.offsets_log import OFFSETS_TOPIC

if TYPE_CHECKING:  # the views exist for the type checker (protocol.viewgen)
    from kafka_shim.protocol.views.txn_offset_commit import TxnOffsetCommitRequestData

__all__ = ["API", "OffsetsPartitionCheck", "handle", "respond"]

# From v4 the client knows TRANSACTION_ABORTABLE; older ones get INVALID_TXN_STATE (KIP-890).
TRANSACTION_ABORTABLE_VERSION = 4
FIRST_IMPLICIT_ADD_VERSION = 5


class OffsetsPartitionCheck(Protocol):
    """The transaction coordinator's verification that the producer's ongoing transaction
    holds `partition` (Kafka's handleVerifyPartitionsInTransaction), answered as it
    answers: NONE; INVALID_PRODUCER_ID_MAPPING (no state for the transactional id, or
    another producer id); PRODUCER_FENCED (another epoch); CONCURRENT_TRANSACTIONS (the
    transaction is being completed); TRANSACTION_ABORTABLE (the partition was not added).
    """

    def __call__(
        self,
        transactional_id: str,
        producer_id: int,
        producer_epoch: int,
        partition: TopicPartition,
        now: int,
    ) -> ErrorCode: ...


async def handle(ctx: RequestContext, request: TxnOffsetCommitRequestData) -> dict[str, Any]:
    coordinator = ctx.broker.transactions
    adds = ctx.api_version >= FIRST_IMPLICIT_ADD_VERSION

    def check(
        transactional_id: str, producer_id: int, producer_epoch: int, partition: TopicPartition, now: int
    ) -> ErrorCode:
        if adds:
            # Transaction version 2: no AddOffsetsToTxn came first; the commit adds the partition.
            return coordinator.add_partitions(
                transactional_id, producer_id, producer_epoch, [partition], TV2, now
            )
        return coordinator.verify_partition(transactional_id, producer_id, producer_epoch, partition)

    return respond(ctx, request, check)


def respond(
    ctx: RequestContext, request: TxnOffsetCommitRequestData, in_transaction: OffsetsPartitionCheck
) -> dict[str, Any]:
    now = ctx.now_ms()
    broker = ctx.broker
    errors: dict[TopicPartition, ErrorCode] = {}
    commits: dict[TopicPartition, OffsetCommit] = {}
    # As KafkaApis: WRITE on the transactional id, then READ on the group refuse the whole
    # request; READ on each topic refuses its partitions.
    denied = ctx.denial(AclOperation.WRITE, ResourceType.TRANSACTIONAL_ID, request.transactional_id)
    denied = denied or ctx.denial(AclOperation.READ, ResourceType.GROUP, request.group_id)
    if denied is None and not ctx.coordinates(
        GROUP_KEY_TYPE, request.group_id
    ):  # the group's coordinator commits them
        denied = ErrorCode.NOT_COORDINATOR
    topic_denial = ctx.refusal(AclOperation.READ, ResourceType.TOPIC)
    names = (t.name for t in request.topics)
    readable = ctx.authorized_names(AclOperation.READ, ResourceType.TOPIC, names) if not denied else set()
    for topic in request.topics:
        for p in topic.partitions:
            tp = TopicPartition(topic.name, p.partition_index)
            if denied is not None:
                errors[tp] = denied
            elif topic.name not in readable:
                errors[tp] = topic_denial
            elif broker.topics.partition(topic.name, p.partition_index) is None:
                errors[tp] = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
            else:
                commits[tp] = OffsetCommit(p.committed_offset, p.committed_leader_epoch, p.committed_metadata)
    error = ErrorCode.NONE
    if commits and request.group_id:
        offsets_partition = TopicPartition(
            OFFSETS_TOPIC, broker.group_service.offsets_log.partition_for(request.group_id)
        )
        error = _as_client_sees_it(
            in_transaction(
                request.transactional_id, request.producer_id, request.producer_epoch, offsets_partition, now
            ),
            ctx.api_version,
        )
    if error != ErrorCode.NONE:
        errors.update(dict.fromkeys(commits, error))
    elif commits:
        commit = TxnCommitRequest(
            group_id=request.group_id,
            producer_id=request.producer_id,
            producer_epoch=request.producer_epoch,
            offsets=commits,
            generation_id=request.generation_id,
            member_id=request.member_id,
            group_instance_id=request.group_instance_id,
        )
        errors.update(broker.group_service.commit_transactional_offsets(commit, now))
    return {
        "throttle_time_ms": 0,
        "topics": [
            {"name": name, "partitions": [{"partition_index": p, "error_code": e} for p, e in partitions]}
            for name, partitions in by_topic(errors).items()
        ],
    }


def _as_client_sees_it(error: ErrorCode, version: int) -> ErrorCode:
    """What Kafka's broker makes of the coordinator's verification answer for this client."""
    if error == ErrorCode.PRODUCER_FENCED:
        return ErrorCode.INVALID_PRODUCER_EPOCH  # producers expect this one here
    if error == ErrorCode.TRANSACTION_ABORTABLE and version < TRANSACTION_ABORTABLE_VERSION:
        return ErrorCode.INVALID_TXN_STATE
    return error
