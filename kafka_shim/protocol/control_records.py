"""Control batches: the COMMIT / ABORT markers that end a transaction in a partition.

A marker is a batch of one record with the control and transactional attribute bits
set and the producer's id and epoch in its header. Its record's key is the control
record key (version int16 0, type int16: 0 abort, 1 commit) and its value Kafka's
EndTxnMarker (version int16 0, coordinator epoch int32), as Kafka's
EndTransactionMarker writes them.
"""

from __future__ import annotations

import struct
from typing import NamedTuple

from kafka_shim.protocol.record_codec import batch_keyed_records, build_keyed_batch
from kafka_shim.protocol.records import (
    CONTROL_FLAG,
    NO_SEQUENCE,
    TRANSACTIONAL_FLAG,
    BatchHeader,
    CorruptRecords,
    RecordBatches,
)

ABORT = 0
COMMIT = 1
CONTROL_KEY_VERSION = 0
END_TXN_MARKER_VERSION = 0
_KEY = struct.Struct(">hh")
_VALUE = struct.Struct(">hi")


class EndTxnMarker(NamedTuple):
    commit: bool
    coordinator_epoch: int


def build_marker_batch(
    marker: EndTxnMarker,
    *,
    offset: int,
    producer_id: int,
    producer_epoch: int,
    timestamp_ms: int,
    partition_leader_epoch: int,
) -> RecordBatches:
    """The control batch holding `marker`, placed at `offset` (build_keyed_batch: the bytes
    build_batch makes of its one record, at a third of the cost, once per partition per
    transaction)."""
    key = _KEY.pack(CONTROL_KEY_VERSION, COMMIT if marker.commit else ABORT)
    value = _VALUE.pack(END_TXN_MARKER_VERSION, marker.coordinator_epoch)
    return build_keyed_batch(
        ((key, value),),
        offset,
        timestamp_ms,
        attributes=CONTROL_FLAG | TRANSACTIONAL_FLAG,
        producer_id=producer_id,
        producer_epoch=producer_epoch,
        base_sequence=NO_SEQUENCE,
        partition_leader_epoch=partition_leader_epoch,
    )


def read_marker(data: bytes, header: BatchHeader) -> EndTxnMarker | None:
    """The marker the control batch `header` describes inside `data` holds; None for an
    empty one (compaction may leave a control batch without records) or one that is
    not an end-transaction marker. CorruptRecords when its record cannot be one."""
    records = batch_keyed_records(data, header)
    if not records:
        return None
    _, key, value = records[0]
    return parse_marker(key, value, header.base_offset)


def parse_marker(key: bytes | None, value: bytes | None, offset: int) -> EndTxnMarker | None:
    """A control record's marker; None for another control type (e.g. KRaft's). Versions are
    read as Kafka's ControlRecordType and EndTransactionMarker read them: a later one is parsed
    as the current one, a negative one means corruption."""
    if key is None or len(key) < _KEY.size:
        raise CorruptRecords(f"control record at {offset} has no control key")
    version, kind = _KEY.unpack_from(key)
    if version < 0:
        raise CorruptRecords(f"control key version {version} at {offset}")
    if kind not in (ABORT, COMMIT):
        return None
    if value is None or len(value) < _VALUE.size:
        raise CorruptRecords(f"end transaction marker at {offset} has no value")
    value_version, coordinator_epoch = _VALUE.unpack_from(value)
    if value_version < 0:
        raise CorruptRecords(f"end transaction marker version {value_version} at {offset}")
    return EndTxnMarker(kind == COMMIT, coordinator_epoch)
