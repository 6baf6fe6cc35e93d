"""The record of a control batch (Kafka's ControlRecordType and EndTransactionMarker).

A transaction's end is written to each of its partitions as a control batch
(attributes: control + transactional; the producer's id and epoch) holding one
record: key = version int16 (0) + type int16 (0 ABORT, 1 COMMIT), value =
version int16 (0) + the coordinator epoch int32.
"""

from __future__ import annotations

import struct
from enum import IntEnum

from kafka_shim.protocol.types import ProtocolError

CONTROL_KEY = struct.Struct(">hh")  # version, type
END_TXN_MARKER = struct.Struct(">hi")  # version, coordinator epoch
CONTROL_VERSION = 0


class ControlType(IntEnum):
    ABORT = 0
    COMMIT = 1


def end_txn_marker(commit: bool, coordinator_epoch: int) -> tuple[bytes, bytes]:
    """The key and value of a transaction marker."""
    kind = ControlType.COMMIT if commit else ControlType.ABORT
    return CONTROL_KEY.pack(CONTROL_VERSION, kind), END_TXN_MARKER.pack(CONTROL_VERSION, coordinator_epoch)


def control_type(key: bytes | None) -> ControlType:
    """ProtocolError for a key that is not a known control record type. Readers take
    the version as Kafka does: only the type matters, whatever the version."""
    if key is None or len(key) < CONTROL_KEY.size:
        raise ProtocolError(f"a control record key of {0 if key is None else len(key)} bytes")
    _, kind = CONTROL_KEY.unpack_from(key)
    try:
        return ControlType(kind)
    except ValueError:
        raise ProtocolError(f"unknown control record type {kind}") from None
