"""A Produce's records as Kafka's LogValidator accepts them: parsed (magic, CRC, sizes),
no control batch from a client, no batch over the topic's max.message.bytes, no keyless
record on a compacted topic; magic 0/1 message sets up-converted to the v2 batch Kafka 3.x
stores for them, where the request's version may carry them."""

from __future__ import annotations

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.protocol.legacy_records import (
    KEYLESS_IN_COMPACTED_TOPIC,
    RecordError,
    RefusedRecords,
    is_legacy,
    message_sizes,
    upconvert,
)
from kafka_shim.protocol.record_codec import TARGET_CODECS, batch_keyed_records
from kafka_shim.protocol.records import RecordBatches, RecordsError
from kafka_shim.shim.partitions.errors import PartitionRefused
from kafka_shim.shim.partitions.settings import produce_settings
from kafka_shim.storage.topic_configs import BrokerValue, effective_value
from kafka_shim.storage.topics import Topic


def validated(
    topic: Topic, index: int, records: bytes | None, broker_value: BrokerValue, legacy_allowed: bool
) -> RecordBatches:
    """The batches to append to partition `index` of `topic`, or PartitionRefused with Kafka's
    answer. `legacy_allowed`: the request may carry magic 0/1 (Produce v0-2)."""
    settings = produce_settings(topic, broker_value)
    max_bytes = settings.max_message_bytes
    try:
        if is_legacy(records or b""):
            return _upconverted(topic, index, records or b"", max_bytes, broker_value, legacy_allowed)
        batches = RecordBatches.parse(records or b"")
    except RecordsError as exc:
        raise PartitionRefused(exc.code, str(exc)) from exc
    for header in batches.headers:
        if header.size > max_bytes:
            raise PartitionRefused(
                ErrorCode.MESSAGE_TOO_LARGE, f"batch of {header.size} bytes exceeds {max_bytes}"
            )
        if header.is_control:
            raise PartitionRefused(ErrorCode.INVALID_RECORD, "clients may not write control batches")
    if settings.compacted:
        _refuse_keyless_records(batches, f"{topic.name}-{index}")
    return batches


def _upconverted(
    topic: Topic, index: int, records: bytes, max_bytes: int, broker_value: BrokerValue, legacy_allowed: bool
) -> RecordBatches:
    """A magic 0/1 message set as the v2 batch Kafka 3.x stores for it (LogValidator);
    Produce v3+ may carry only v2 batches (Kafka's ProduceRequest.validateRecords)."""
    if not legacy_allowed:
        # KafkaApis answers validateRecords' refusal with the error code alone (no message).
        raise PartitionRefused(ErrorCode.INVALID_RECORD)
    for message_size in message_sizes(records):
        if message_size > max_bytes:
            raise PartitionRefused(
                ErrorCode.MESSAGE_TOO_LARGE, f"message of {message_size} bytes exceeds {max_bytes}"
            )
    compacted = produce_settings(topic, broker_value).compacted
    target = TARGET_CODECS[effective_value(topic.configs, "compression.type", broker_value)]
    try:
        batches = upconvert(records, target, require_keys=f"{topic.name}-{index}" if compacted else None)
    except RefusedRecords as exc:
        raise _record_errors(exc.errors) from exc
    if batches.first.size > max_bytes:
        raise PartitionRefused(
            ErrorCode.MESSAGE_TOO_LARGE, f"batch of {batches.first.size} bytes exceeds {max_bytes}"
        )
    return batches


def _record_errors(errors: list[RecordError]) -> PartitionRefused:
    """LogValidator's INVALID_RECORD answer: every record error, the first three in the message."""
    shown = ", ".join(f"RecordError(batchIndex={i}, message='{m}')" for i, m in errors[:3])
    return PartitionRefused(
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
            raise PartitionRefused(exc.code, str(exc)) from exc
        errors += [
            RecordError(index, KEYLESS_IN_COMPACTED_TOPIC.format(partition))
            for index, (_, key, _) in enumerate(records)
            if key is None
        ]
    if errors:
        raise _record_errors(errors)
