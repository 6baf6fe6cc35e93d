"""__consumer_offsets records as columns, decoded in Spark's Python workers with the
project's own declarations of Kafka's OffsetCommit/GroupMetadata keys and values."""

from __future__ import annotations

from typing import Any

from pyspark.sql import Column
from pyspark.sql import functions as F

DECODED = (
    "kind string, group string, topic string, partition int, committed long, "
    "commit_ms long, generation int, protocol string, leader string, members int, state_ms long"
)
OFFSET, GROUP, UNKNOWN = "offset", "group", "unknown"


def decode_record(key: bytes | None, value: bytes | None) -> dict[str, Any]:
    """One record; a tombstone keeps its key with null values. Records this decoder does
    not know (a newer Kafka's key versions) are kept as `unknown`, not fatal."""
    from construct import ConstructError

    from kafka_shim.protocol.offsets_records import (
        GroupKey,
        GroupValue,
        OffsetKey,
        OffsetValue,
        decode_record,
    )
    from kafka_shim.protocol.types import ProtocolError

    try:
        record = decode_record(key, value)
    except (ProtocolError, ConstructError, ValueError):
        return {"kind": UNKNOWN}
    if isinstance(record.key, GroupKey):
        row: dict[str, Any] = {"kind": GROUP, "group": record.key.group}
        if isinstance(record.value, GroupValue):
            v = record.value
            state_ms = v.current_state_timestamp if v.current_state_timestamp > 0 else None
            row.update(generation=v.generation, protocol=v.protocol, leader=v.leader)
            row.update(members=len(v.members), state_ms=state_ms)
        return row
    k = record.key
    if not isinstance(k, OffsetKey):  # a KIP-848 consumer group's membership record
        return {"kind": UNKNOWN}
    row = {"kind": OFFSET, "group": k.group, "topic": k.topic, "partition": k.partition}
    if isinstance(record.value, OffsetValue):
        row.update(committed=record.value.offset, commit_ms=record.value.commit_timestamp)
    return row


def decoded(key: Column, value: Column) -> Column:
    # A plain (pickled-rows) UDF: an Arrow-optimised one would need pandas in the workers.
    return F.udf(decode_record, DECODED, useArrow=False)(key, value)
