"""The records of `__share_group_state`, in Kafka's share coordinator's formats.

Each key and value is an int16 version followed by the declared struct. The key's version
says what the record is: 0 a ShareSnapshot, the whole state of one share partition. (Kafka
also writes 1, ShareUpdate, deltas between snapshots; this broker writes a snapshot at every
change, its state being bounded by share.partition.max.record.locks, so it has no deltas to
read.) A null value is a tombstone (the share partition's state was deleted).

Delivery states persisted: 0 available (an acquired record is written as available), 2
acknowledged, 4 archived.
"""

from __future__ import annotations

import uuid
from typing import Any, Final, NamedTuple

from kafka_shim.protocol.schema import INT8, INT16, INT32, INT64, STRING, UUID, Array, Field, Message
from kafka_shim.protocol.types import ProtocolError

SNAPSHOT: Final = 0
VALUE_VERSION: Final = 0

ShareSnapshotKey = Message(
    "ShareSnapshotKey",
    versions="0",
    flexible="none",
    fields=[Field("group_id", STRING), Field("topic_id", UUID), Field("partition", INT32)],
)

ShareSnapshotValue = Message(
    "ShareSnapshotValue",
    versions="0",
    flexible="0+",
    fields=[
        Field("snapshot_epoch", INT32),
        Field("state_epoch", INT32),
        Field("leader_epoch", INT32),
        Field("start_offset", INT64),
        # Kafka 4.2 (KIP-1226): offsets at or past the start whose delivery is complete
        Field("delivery_complete_count", INT32, tag=0, default=-1),
        Field("create_timestamp", INT64),
        Field("write_timestamp", INT64),
        Field(
            "state_batches",
            Array(
                Field("first_offset", INT64),
                Field("last_offset", INT64),
                Field("delivery_state", INT8),
                Field("delivery_count", INT16),
            ),
        ),
    ],
)


class SharePartitionKey(NamedTuple):
    group_id: str
    topic_id: uuid.UUID
    partition: int


class ShareStateRecord(NamedTuple):
    """One snapshot: its share partition and its value's fields (None: a tombstone)."""

    key: SharePartitionKey
    value: dict[str, Any] | None


def encode_record(record: ShareStateRecord) -> tuple[bytes, bytes | None]:
    key = SNAPSHOT.to_bytes(2, "big") + ShareSnapshotKey.build(record.key._asdict(), SNAPSHOT)
    if record.value is None:
        return key, None
    return key, VALUE_VERSION.to_bytes(2, "big") + ShareSnapshotValue.build(record.value, VALUE_VERSION)


def decode_record(key: bytes | None, value: bytes | None) -> ShareStateRecord:
    """ProtocolError for a record that is not a snapshot in Kafka's format."""
    if key is None or len(key) < 2:
        raise ProtocolError("a __share_group_state record without a key")
    kind = int.from_bytes(key[:2], "big")
    if kind != SNAPSHOT:
        raise ProtocolError(f"__share_group_state key version {kind} is not a ShareSnapshot")
    parsed = ShareSnapshotKey.parse(key[2:], kind)
    partition_key = SharePartitionKey(parsed.group_id, parsed.topic_id, parsed.partition)
    if value is None:
        return ShareStateRecord(partition_key, None)
    version = int.from_bytes(value[:2], "big")
    if version != VALUE_VERSION:
        raise ProtocolError(f"unknown __share_group_state value version {version}")
    fields = ShareSnapshotValue.parse(value[2:], version)
    return ShareStateRecord(partition_key, {f.name: fields[f.name] for f in ShareSnapshotValue.fields})
