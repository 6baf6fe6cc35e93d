"""The records of `__transaction_state`, in Kafka's own key and value formats.

Like `protocol.offsets_records` these are not APIs: each key and value is an int16
version followed by the declared struct (Kafka's TransactionLogKey/Value). A null
value is a tombstone (an expired transactional id). Kafka writes value version 1
(flexible, with tagged fields) once the `transaction.version` feature is 1 or more,
version 0 below that; so does this broker. Both versions decode.
"""

from __future__ import annotations

import struct
from typing import Final, NamedTuple

from kafka_shim.protocol.schema import INT8, INT16, INT32, INT64, STRING, Array, Field, Message
from kafka_shim.protocol.types import ProtocolError

TransactionLogKey = Message(
    "TransactionLogKey",
    versions="0",
    flexible="none",
    fields=[Field("transactional_id", STRING)],
)

TransactionLogValue = Message(
    "TransactionLogValue",
    versions="0-1",
    flexible="1+",
    fields=[
        Field("producer_id", INT64),
        Field("previous_producer_id", INT64, "1+", tag=0, default=-1),
        Field("next_producer_id", INT64, "1+", tag=1, default=-1),
        Field("producer_epoch", INT16),
        Field("transaction_timeout_ms", INT32),
        Field("transaction_status", INT8),
        Field(
            "transaction_partitions",
            Array(Field("topic", STRING), Field("partition_ids", Array(INT32))),
            nullable="0+",
            default=None,
        ),
        Field("transaction_last_update_timestamp_ms", INT64),
        Field("transaction_start_timestamp_ms", INT64),
        Field("client_transaction_version", INT16, "1+", tag=2, default=0),
    ],
)

KEY_VERSION: Final = 0
EMPTY_STATUS: Final = 0
_VERSION = struct.Struct(">h")


class TransactionValue(NamedTuple):
    """One transactional id's state; `status` is Kafka's TransactionState id."""

    producer_id: int
    producer_epoch: int
    timeout_ms: int
    status: int
    partitions: tuple[tuple[str, tuple[int, ...]], ...]
    last_update_ms: int
    start_ms: int
    previous_producer_id: int = -1
    next_producer_id: int = -1
    client_transaction_version: int = 0


class TransactionRecord(NamedTuple):
    """One record of the transaction log; `value` None is a tombstone."""

    transactional_id: str
    value: TransactionValue | None


def value_version(transaction_version: int) -> int:
    """The value version Kafka writes at a finalized `transaction.version` level."""
    return 1 if transaction_version >= 1 else 0


def encode_record(record: TransactionRecord, transaction_version: int) -> tuple[bytes, bytes | None]:
    key = _VERSION.pack(KEY_VERSION) + TransactionLogKey.build(
        {"transactional_id": record.transactional_id}, KEY_VERSION
    )
    value = record.value
    if value is None:
        return key, None
    version = value_version(transaction_version)
    fields = {
        "producer_id": value.producer_id,
        "previous_producer_id": value.previous_producer_id,
        "next_producer_id": value.next_producer_id,
        "producer_epoch": value.producer_epoch,
        "transaction_timeout_ms": value.timeout_ms,
        "transaction_status": value.status,
        # Kafka writes null partitions for Empty (status 0), a list otherwise.
        "transaction_partitions": None
        if value.status == EMPTY_STATUS
        else [{"topic": topic, "partition_ids": list(partitions)} for topic, partitions in value.partitions],
        "transaction_last_update_timestamp_ms": value.last_update_ms,
        "transaction_start_timestamp_ms": value.start_ms,
        "client_transaction_version": value.client_transaction_version,
    }
    return key, _VERSION.pack(version) + TransactionLogValue.build(fields, version)


def _split(data: bytes, what: str) -> tuple[int, bytes]:
    if len(data) < _VERSION.size:
        raise ProtocolError(f"{what} of {len(data)} bytes has no version")
    return _VERSION.unpack_from(data)[0], data[_VERSION.size :]


def decode_record(key: bytes | None, value: bytes | None) -> TransactionRecord:
    """ProtocolError for a record that is not Kafka's (no key, unknown version, bad bytes)."""
    if key is None:
        raise ProtocolError("a transaction log record without a key")
    key_version, key_body = _split(key, "key")
    if key_version not in TransactionLogKey.versions:
        raise ProtocolError(f"unknown __transaction_state key version {key_version}")
    transactional_id = TransactionLogKey.parse(key_body, key_version).transactional_id
    if value is None:
        return TransactionRecord(transactional_id, None)
    version, body = _split(value, "value")
    if version not in TransactionLogValue.versions:
        raise ProtocolError(f"unknown __transaction_state value version {version}")
    v = TransactionLogValue.parse(body, version)
    partitions = tuple((p.topic, tuple(p.partition_ids)) for p in v.transaction_partitions or ())
    return TransactionRecord(
        transactional_id,
        TransactionValue(
            producer_id=v.producer_id,
            producer_epoch=v.producer_epoch,
            timeout_ms=v.transaction_timeout_ms,
            status=v.transaction_status,
            partitions=partitions,
            last_update_ms=v.transaction_last_update_timestamp_ms,
            start_ms=v.transaction_start_timestamp_ms,
            previous_producer_id=v.previous_producer_id,
            next_producer_id=v.next_producer_id,
            client_transaction_version=v.client_transaction_version,
        ),
    )
