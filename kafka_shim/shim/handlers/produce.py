"""Produce: validate each partition's batches by their headers, append, answer
base offsets. acks=0 gets no response at all. A partition led by another broker (shim.testbroker.cluster)
is answered NOT_LEADER_OR_FOLLOWER, with the leader's id, epoch and address from v10 (KIP-951).

A transactional batch is appended only within its producer's ongoing transaction
that holds the partition, as the transaction coordinator says (Kafka's
transaction verification, KIP-890 part 1); from v12 (transaction version 2) the
append adds the partition to the transaction instead (part 2)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kafka_shim.protocol.errors import NO_ERROR, ErrorCode
from kafka_shim.protocol.messages.produce import API
from kafka_shim.protocol.records import BatchHeader
from kafka_shim.protocol.releases import TV2
from kafka_shim.shim.context import RequestContext, leader_endpoints
from kafka_shim.shim.coordinator.types import TopicPartition
from kafka_shim.shim.partitions.append import PRODUCER_STATE_ERRORS, append, writable
from kafka_shim.shim.partitions.errors import PartitionRefused
from kafka_shim.shim.partitions.settings import broker_values
from kafka_shim.shim.partitions.validation import validated
from kafka_shim.shim.quotas.throttling import throttle_produce
from kafka_shim.shim.security.authorizer import AclOperation, ResourceType
from kafka_shim.storage.errors import StorageError
from kafka_shim.storage.log import PartitionLog

if TYPE_CHECKING:  # the views exist for the type checker (protocol.viewgen)
    from kafka_shim.protocol.views.produce import (
        ProduceRequestData,
        ProduceRequestTopicData,
        ProduceRequestTopicDataPartitionData,
    )

__all__ = ["API", "handle"]

VALID_ACKS = (0, 1, -1)
# v11 knows TRANSACTION_ABORTABLE (older producers get INVALID_TXN_STATE); v12 adds
# partitions to the transaction implicitly.
FIRST_VERSION_WITH_ABORTABLE = 11
FIRST_IMPLICIT_ADD_VERSION = 12
# v0-2 may carry magic 0/1 message sets, up-converted on append.
FIRST_VERSION_MAGIC_2_ONLY = 3
# What the coordinator answers that a producer should retry: Kafka hands old producers
# a retriable NOT_ENOUGH_REPLICAS for them.
_RETRY_LATER = (
    ErrorCode.CONCURRENT_TRANSACTIONS,
    ErrorCode.COORDINATOR_LOAD_IN_PROGRESS,
    ErrorCode.COORDINATOR_NOT_AVAILABLE,
    ErrorCode.NOT_COORDINATOR,
)


def _check_transaction(
    ctx: RequestContext,
    transactional_id: str | None,
    tp: TopicPartition,
    batch: BatchHeader,
    log: PartitionLog,
) -> None:
    """Refuse a transactional batch outside its producer's transaction (Kafka's codes)."""
    if transactional_id is None:
        # Kafka authorizes transactional writes by the transactional id: none, no write (and,
        # as Kafka 3.9 answers, no message).
        raise PartitionRefused(ctx.refusal(AclOperation.WRITE, ResourceType.TRANSACTIONAL_ID))
    checked_elsewhere = ctx.transaction_checks
    coordinator = ctx.broker.transactions
    if checked_elsewhere is not None:  # another broker process coordinates the transaction
        # Not asked when the producer's transaction was open here (shim.processes.verification):
        # still open now, the batch goes on in it, as Kafka appends without verifying then.
        answered = checked_elsewhere.get(tp)
        if answered is not None:
            code = answered
        elif log.producers.in_transaction(batch.producer_id, batch.producer_epoch):
            code = ErrorCode.NONE
        else:  # it ended while the others were asked: asked again when the client retries
            code = ErrorCode.COORDINATOR_NOT_AVAILABLE
    elif ctx.api_version >= FIRST_IMPLICIT_ADD_VERSION:
        try:
            code = coordinator.add_partitions(
                transactional_id, batch.producer_id, batch.producer_epoch, [tp], TV2, ctx.now_ms()
            )
        except StorageError as exc:  # its record not written: the coordinator's error, retried
            code = exc.code
    else:
        code = coordinator.verify_partition(transactional_id, batch.producer_id, batch.producer_epoch, tp)
    if code == ErrorCode.NONE:
        return
    if code == ErrorCode.PRODUCER_FENCED:
        code = ErrorCode.INVALID_PRODUCER_EPOCH
    elif code == ErrorCode.TRANSACTION_ABORTABLE and ctx.api_version < FIRST_VERSION_WITH_ABORTABLE:
        code = ErrorCode.INVALID_TXN_STATE
    elif code in _RETRY_LATER:
        code = ErrorCode.NOT_ENOUGH_REPLICAS
    raise PartitionRefused(code)  # the verification's error alone, as Kafka 3.9 answers it


def _check_leader(ctx: RequestContext, name: str, index: int, log: PartitionLog) -> None:
    code = ctx.leader_error(name, index, -1, log)
    if code != ErrorCode.NONE:
        refused = PartitionRefused(code)
        refused.current_leader = {
            "leader_id": ctx.broker.cluster.leader(name, index),
            "leader_epoch": log.leader_epoch,
        }
        raise refused


def _append(
    ctx: RequestContext,
    transactional_id: str | None,
    name: str,
    index: int,
    records: bytes | None,
    writable_names: set[str],
) -> dict[str, Any]:
    """One partition's answer: authorized, led here, then the partition service's checks and
    append (shim.partitions), with the transaction verified between the two."""
    log: PartitionLog | None = None
    try:
        if name not in writable_names:  # before anything else, so the topic's existence stays private
            raise PartitionRefused(ctx.refusal(AclOperation.WRITE, ResourceType.TOPIC))
        topic, log = writable(ctx.broker.topics, name, index)
        if not ctx.broker.cluster.single:
            _check_leader(ctx, name, index, log)
        config = ctx.broker.config
        broker_value = broker_values(config, config.kafka_value)
        legacy_allowed = ctx.api_version < FIRST_VERSION_MAGIC_2_ONLY
        batches = validated(topic, index, records, broker_value, legacy_allowed)
        if batches.first.is_transactional:
            _check_transaction(ctx, transactional_id, TopicPartition(name, index), batches.first, log)
        appended = append(topic, log, batches, broker_value, ctx.now_ms)
    except (PartitionRefused, StorageError) as exc:
        refusal: dict[str, Any] = {
            "index": index,
            "error_code": exc.code,
            "base_offset": -1,
            "error_message": exc.message,
        }
        if isinstance(exc, StorageError) and exc.code in PRODUCER_STATE_ERRORS and log is not None:
            # Refused by the log's producer state: Kafka answers the log start offset, and
            # no message (its exception is not one whose message it passes on).
            refusal |= {"log_start_offset": log.log_start_offset, "error_message": None}
        if isinstance(exc, PartitionRefused) and exc.record_errors:
            refusal["record_errors"] = exc.record_errors
        if isinstance(exc, PartitionRefused) and exc.current_leader is not None:
            refusal["current_leader"] = exc.current_leader
        return refusal
    return {
        "index": index,
        "error_code": NO_ERROR,
        "base_offset": appended.base_offset,
        "log_append_time_ms": appended.log_append_time_ms,
        "log_start_offset": appended.log_start_offset,
    }


FIRST_TOPIC_ID_VERSION = 13  # KIP-516: topics named by id


def _name(ctx: RequestContext, topic: ProduceRequestTopicData) -> str | None:
    """The topic's name; from v13 that of the topic with the id given (None: no such topic)."""
    if ctx.api_version < FIRST_TOPIC_ID_VERSION:
        return topic.name
    found = ctx.broker.topics.get_by_id(topic.topic_id)
    return None if found is None else found.name


def _unknown_id(partitions: list[ProduceRequestTopicDataPartitionData]) -> list[dict[str, Any]]:
    return [
        {"index": p.index, "error_code": ErrorCode.UNKNOWN_TOPIC_ID, "base_offset": -1} for p in partitions
    ]


def _refuse_all(request: ProduceRequestData, code: ErrorCode) -> list[dict[str, Any]]:
    return [
        {
            "name": topic.name,
            "topic_id": topic.topic_id,
            "partition_responses": [
                {"index": p.index, "error_code": code, "base_offset": -1} for p in topic.partition_data
            ],
        }
        for topic in request.topic_data
    ]


async def handle(ctx: RequestContext, request: ProduceRequestData) -> dict[str, Any] | None:
    txn_id, acks = request.transactional_id, request.acks
    if acks not in VALID_ACKS:
        responses = _refuse_all(request, ErrorCode.INVALID_REQUIRED_ACKS)
    elif txn_id is not None and (
        denial := ctx.denial(AclOperation.WRITE, ResourceType.TRANSACTIONAL_ID, txn_id)
    ):
        # Kafka refuses the whole request before looking at any topic.
        responses = _refuse_all(request, denial)
    else:
        topics = request.topic_data  # each field read once: a parsed field's read is a call
        names = [_name(ctx, topic) for topic in topics]
        writable = ctx.authorized_names(
            AclOperation.WRITE, ResourceType.TOPIC, [name for name in names if name is not None]
        )
        responses = []
        for topic, name in zip(topics, names, strict=True):  # a loop: a comprehension is a call on 3.11
            partitions = topic.partition_data
            if name is None:
                answers = _unknown_id(partitions)
            else:
                answers = [_append(ctx, txn_id, name, p.index, p.records, writable) for p in partitions]
            responses.append({"name": name or "", "topic_id": topic.topic_id, "partition_responses": answers})
    throttle_time_ms = throttle_produce(ctx, request)
    if acks == 0:
        return None
    # One copy of the data: acks=1 and acks=-1 are both satisfied once the log has it.
    answer = {"responses": responses, "throttle_time_ms": throttle_time_ms}
    if not ctx.broker.cluster.single:
        answer["node_endpoints"] = leader_endpoints(ctx, responses, "partition_responses")
    return answer
