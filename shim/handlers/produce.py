"""Produce: validate each partition's batches by their headers, append, answer
base offsets. acks=0 gets no response at all. A partition led by another broker (shim.cluster)
is answered NOT_LEADER_OR_FOLLOWER, with the leader's id, epoch and address from v10 (KIP-951).

A transactional batch is appended only within its producer's ongoing transaction
that holds the partition, as the transaction coordinator says (Kafka's
transaction verification, KIP-890 part 1); from v12 (transaction version 2) the
append adds the partition to the transaction instead (part 2)."""

from __future__ import annotations

from typing import Any

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.protocol.legacy_records import (
    KEYLESS_IN_COMPACTED_TOPIC,
    RecordError,
    RefusedRecords,
    is_legacy,
    message_sizes,
    upconvert,
)
from kafka_shim.protocol.messages.produce import API
from kafka_shim.protocol.record_codec import TARGET_CODECS, batch_keyed_records
from kafka_shim.protocol.records import BatchHeader, RecordBatches, RecordsError
from kafka_shim.shim.authorizer import AclOperation, ResourceType
from kafka_shim.shim.context import RequestContext, leader_endpoints
from kafka_shim.shim.coordinator.types import TopicPartition
from kafka_shim.shim.throttling import throttle_produce
from kafka_shim.shim.transactions.coordinator import TV2
from kafka_shim.storage.errors import StorageError
from kafka_shim.storage.internal_topics import INTERNAL_TOPICS
from kafka_shim.storage.log import PartitionLog
from kafka_shim.storage.topic_configs import effective_value
from kafka_shim.storage.topics import Topic

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


class Refused(Exception):
    def __init__(
        self, code: ErrorCode, message: str | None = None, record_errors: list[dict[str, Any]] | None = None
    ) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.record_errors = record_errors or []
        self.current_leader: dict[str, int] | None = None  # KIP-951, with NOT_LEADER_OR_FOLLOWER


def _topic(ctx: RequestContext, name: str) -> Topic:
    """An existing topic: Kafka 3.9's KafkaApis.handleProduceRequest creates none (auto-creation
    is Metadata's), and answers a name it does not know, legal or not, UNKNOWN_TOPIC_OR_PARTITION
    without a message; a client then asks Metadata, which creates it."""
    topic = ctx.broker.topics.get(name)
    if topic is None:
        raise Refused(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)
    return topic


def _validated(ctx: RequestContext, topic: Topic, index: int, records: bytes | None) -> RecordBatches:
    broker_value = ctx.broker.config.kafka_value
    max_bytes = int(effective_value(topic.configs, "max.message.bytes", broker_value))
    try:
        if is_legacy(records or b""):
            return _upconverted(ctx, topic, index, records or b"", max_bytes)
        batches = RecordBatches.parse(records or b"")
    except RecordsError as exc:
        raise Refused(exc.code, str(exc)) from exc
    for header in batches.headers:
        if header.size > max_bytes:
            raise Refused(ErrorCode.MESSAGE_TOO_LARGE, f"batch of {header.size} bytes exceeds {max_bytes}")
        if header.is_control:
            raise Refused(ErrorCode.INVALID_RECORD, "clients may not write control batches")
    if "compact" in effective_value(topic.configs, "cleanup.policy", broker_value):
        _refuse_keyless_records(batches, f"{topic.name}-{index}")
    return batches


def _upconverted(
    ctx: RequestContext, topic: Topic, index: int, records: bytes, max_bytes: int
) -> RecordBatches:
    """A magic 0/1 message set as the v2 batch Kafka 3.x stores for it (LogValidator);
    Produce v3+ may carry only v2 batches (Kafka's ProduceRequest.validateRecords)."""
    if ctx.api_version >= FIRST_VERSION_MAGIC_2_ONLY:
        # KafkaApis answers validateRecords' refusal with the error code alone (no message).
        raise Refused(ErrorCode.INVALID_RECORD)
    broker_value = ctx.broker.config.kafka_value
    for message_size in message_sizes(records):
        if message_size > max_bytes:
            raise Refused(ErrorCode.MESSAGE_TOO_LARGE, f"message of {message_size} bytes exceeds {max_bytes}")
    compacted = "compact" in effective_value(topic.configs, "cleanup.policy", broker_value)
    target = TARGET_CODECS[effective_value(topic.configs, "compression.type", broker_value)]
    try:
        batches = upconvert(records, target, require_keys=f"{topic.name}-{index}" if compacted else None)
    except RefusedRecords as exc:
        raise _record_errors(exc.errors) from exc
    if batches.first.size > max_bytes:
        raise Refused(ErrorCode.MESSAGE_TOO_LARGE, f"batch of {batches.first.size} bytes exceeds {max_bytes}")
    return batches


def _record_errors(errors: list[RecordError]) -> Refused:
    """LogValidator's INVALID_RECORD answer: every record error, the first three in the message."""
    shown = ", ".join(f"RecordError(batchIndex={i}, message='{m}')" for i, m in errors[:3])
    return Refused(
        ErrorCode.INVALID_RECORD,
        f"One or more records have been rejected due to {len(errors)} record errors in total, "
        f"and only showing the first three errors at most: [{shown}]",
        [{"batch_index": i, "batch_index_error_message": m} for i, m in errors],
    )


def _refuse_keyless_records(batches: RecordBatches, partition: str) -> None:
    """A compacted topic keeps the last record per key, so a record without one is refused,
    with Kafka's errors (LogValidator): one per keyless record, indexed within its batch, and
    the whole batch is not written. Only compacted topics pay for reading the records."""
    errors: list[RecordError] = []
    for header in batches.headers:
        try:
            records = batch_keyed_records(batches.data, header)
        except RecordsError as exc:
            raise Refused(exc.code, str(exc)) from exc
        errors += [
            RecordError(index, KEYLESS_IN_COMPACTED_TOPIC.format(partition))
            for index, (_, key, _) in enumerate(records)
            if key is None
        ]
    if errors:
        raise _record_errors(errors)


def _check_transaction(
    ctx: RequestContext, transactional_id: str | None, tp: TopicPartition, batch: BatchHeader
) -> None:
    """Refuse a transactional batch outside its producer's transaction (Kafka's codes)."""
    if transactional_id is None:
        # Kafka authorizes transactional writes by the transactional id: none, no write (and,
        # as Kafka 3.9 answers, no message).
        raise Refused(ctx.refusal(AclOperation.WRITE, ResourceType.TRANSACTIONAL_ID))
    coordinator = ctx.broker.transactions
    if ctx.api_version >= FIRST_IMPLICIT_ADD_VERSION:
        code = coordinator.add_partitions(
            transactional_id, batch.producer_id, batch.producer_epoch, [tp], TV2, ctx.now_ms()
        )
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
    raise Refused(code)  # the verification's error alone, as Kafka 3.9 answers it


def _check_leader(ctx: RequestContext, name: str, index: int, log: PartitionLog) -> None:
    code = ctx.leader_error(name, index, -1, log)
    if code != ErrorCode.NONE:
        refused = Refused(code)
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
    writable: set[str],
) -> dict[str, Any]:
    try:
        if name not in writable:  # before anything else, so the topic's existence stays private
            raise Refused(ctx.refusal(AclOperation.WRITE, ResourceType.TOPIC))
        topic = _topic(ctx, name)
        log = topic.partition(index)
        if log is None:
            raise Refused(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)
        if name in INTERNAL_TOPICS:
            # Kafka's "Cannot append to internal topic", whatever the ACLs: only the broker's
            # coordinators write them (Kafka lets client.id __admin_client through; not here).
            raise Refused(ErrorCode.INVALID_TOPIC_EXCEPTION)
        if not ctx.broker.cluster.single:
            _check_leader(ctx, name, index, log)
        batches = _validated(ctx, topic, index, records)
        if batches.first.is_transactional:
            _check_transaction(ctx, transactional_id, TopicPartition(name, index), batches.first)
        append_time = -1
        timestamp_type = effective_value(
            topic.configs, "message.timestamp.type", ctx.broker.config.kafka_value
        )
        if timestamp_type == "LogAppendTime":
            append_time = ctx.now_ms()
            batches = batches.with_log_append_time(append_time)
        result = log.append(batches)
    except (Refused, StorageError) as exc:
        refusal: dict[str, Any] = {
            "index": index,
            "error_code": exc.code,
            "base_offset": -1,
            "error_message": exc.message,
        }
        if isinstance(exc, StorageError) and exc.code in _PRODUCER_STATE_ERRORS and log is not None:
            # Refused by the log's producer state: Kafka answers the log start offset, and
            # no message (its exception is not one whose message it passes on).
            refusal |= {"log_start_offset": log.log_start_offset, "error_message": None}
        if isinstance(exc, Refused) and exc.record_errors:
            refusal["record_errors"] = exc.record_errors
        if isinstance(exc, Refused) and exc.current_leader is not None:
            refusal["current_leader"] = exc.current_leader
        return refusal
    return {
        "index": index,
        "error_code": ErrorCode.NONE,
        "base_offset": result.base_offset,
        "log_append_time_ms": result.duplicate_timestamp if result.duplicate else append_time,
        "log_start_offset": log.log_start_offset,
    }


_PRODUCER_STATE_ERRORS = frozenset(
    {
        ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER,
        ErrorCode.DUPLICATE_SEQUENCE_NUMBER,
        ErrorCode.INVALID_PRODUCER_EPOCH,
    }
)

FIRST_TOPIC_ID_VERSION = 13  # KIP-516: topics named by id


def _name(ctx: RequestContext, topic: Any) -> str | None:
    """The topic's name; from v13 that of the topic with the id given (None: no such topic)."""
    if ctx.api_version < FIRST_TOPIC_ID_VERSION:
        return topic.name  # type: ignore[no-any-return]
    found = ctx.broker.topics.get_by_id(topic.topic_id)
    return None if found is None else found.name


def _unknown_id(partitions: Any) -> list[dict[str, Any]]:
    return [
        {"index": p.index, "error_code": ErrorCode.UNKNOWN_TOPIC_ID, "base_offset": -1} for p in partitions
    ]


def _refuse_all(request: Any, code: ErrorCode) -> list[dict[str, Any]]:
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


async def handle(ctx: RequestContext, request: Any) -> dict[str, Any] | None:
    txn_id = request.transactional_id
    if request.acks not in VALID_ACKS:
        responses = _refuse_all(request, ErrorCode.INVALID_REQUIRED_ACKS)
    elif txn_id is not None and (
        denial := ctx.denial(AclOperation.WRITE, ResourceType.TRANSACTIONAL_ID, txn_id)
    ):
        # Kafka refuses the whole request before looking at any topic.
        responses = _refuse_all(request, denial)
    else:
        names = [_name(ctx, topic) for topic in request.topic_data]
        writable = ctx.authorized_names(
            AclOperation.WRITE, ResourceType.TOPIC, (name for name in names if name is not None)
        )
        responses = [
            {
                "name": name or "",
                "topic_id": topic.topic_id,
                "partition_responses": _unknown_id(topic.partition_data)
                if name is None
                else [_append(ctx, txn_id, name, p.index, p.records, writable) for p in topic.partition_data],
            }
            for topic, name in zip(request.topic_data, names, strict=True)
        ]
    throttle_time_ms = throttle_produce(ctx, request)
    if request.acks == 0:
        return None
    # One copy of the data: acks=1 and acks=-1 are both satisfied once the log has it.
    answer = {"responses": responses, "throttle_time_ms": throttle_time_ms}
    if not ctx.broker.cluster.single:
        answer["node_endpoints"] = leader_endpoints(ctx, responses, "partition_responses")
    return answer
