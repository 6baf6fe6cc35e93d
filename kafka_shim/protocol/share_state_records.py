"""The records of `__share_group_state`, in Kafka's share coordinator's formats.

Each key and value is an int16 version followed by the declared struct. The key's version
says what the record is: 0 a ShareSnapshot, the whole state of one share partition; 1 a
ShareUpdate, the state batches that changed since the last record (a delta on the snapshot
before it, `merge_update`). A null value is a tombstone (the share partition's state was
deleted).

Delivery states persisted: 0 available (an acquired record is written as available), 2
acknowledged, 4 archived.
"""

from __future__ import annotations

import uuid
from typing import Any, Final, NamedTuple

from kafka_shim.protocol.schema import INT8, INT16, INT32, INT64, STRING, UUID, Array, Field, Message
from kafka_shim.protocol.types import ProtocolError

SNAPSHOT: Final = 0
UPDATE: Final = 1
VALUE_VERSION: Final = 0

_STATE_BATCHES = Field(
    "state_batches",
    Array(
        Field("first_offset", INT64),
        Field("last_offset", INT64),
        Field("delivery_state", INT8),
        Field("delivery_count", INT16),
    ),
)

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
        _STATE_BATCHES,
    ],
)

ShareUpdateKey = Message(
    "ShareUpdateKey",
    versions="1",
    flexible="none",
    fields=[Field("group_id", STRING), Field("topic_id", UUID), Field("partition", INT32)],
)

ShareUpdateValue = Message(
    "ShareUpdateValue",
    versions="0",
    flexible="0+",
    fields=[
        Field("snapshot_epoch", INT32),  # the epoch of the snapshot this update follows
        Field("leader_epoch", INT32),
        Field("start_offset", INT64),  # -1: unchanged
        Field("delivery_complete_count", INT32, tag=0, default=-1),
        _STATE_BATCHES,
    ],
)


class SharePartitionKey(NamedTuple):
    group_id: str
    topic_id: uuid.UUID
    partition: int


class ShareStateRecord(NamedTuple):
    """One snapshot (or, `update`, a ShareUpdate): its share partition and its value's fields
    (None: a tombstone)."""

    key: SharePartitionKey
    value: dict[str, Any] | None
    update: bool = False


def encode_record(record: ShareStateRecord) -> tuple[bytes, bytes | None]:
    kind, key_schema, value_schema = (
        (UPDATE, ShareUpdateKey, ShareUpdateValue)
        if record.update
        else (SNAPSHOT, ShareSnapshotKey, ShareSnapshotValue)
    )
    key = kind.to_bytes(2, "big") + key_schema.build(record.key._asdict(), kind)
    if record.value is None:
        return key, None
    return key, VALUE_VERSION.to_bytes(2, "big") + value_schema.build(record.value, VALUE_VERSION)


def merge_update(snapshot: dict[str, Any] | None, update: dict[str, Any]) -> dict[str, Any]:
    """A share partition's state with a ShareUpdate applied, as Kafka's share coordinator
    replays one: the update's batches replace the offsets they cover, its start offset (unless
    -1) drops what lies below it, its delivery-complete count (unless -1) is taken."""
    if snapshot is None:  # an update with no snapshot before it (compacted away): it is the state
        snapshot = {
            "snapshot_epoch": update["snapshot_epoch"],
            "state_epoch": 0,
            "create_timestamp": -1,
            "write_timestamp": -1,
            "start_offset": -1,
            "leader_epoch": -1,
            "delivery_complete_count": -1,
            "state_batches": [],
        }
    start = snapshot["start_offset"] if update["start_offset"] == -1 else update["start_offset"]
    per_offset: dict[int, tuple[int, int]] = {}
    for batch in [*snapshot["state_batches"], *update["state_batches"]]:
        for offset in range(batch["first_offset"], batch["last_offset"] + 1):
            per_offset[offset] = (batch["delivery_state"], batch["delivery_count"])
    merged: list[dict[str, int]] = []
    for offset in sorted(o for o in per_offset if o >= start):
        state, count = per_offset[offset]
        last = merged[-1] if merged else None
        if (
            last is not None
            and last["last_offset"] == offset - 1
            and (last["delivery_state"], last["delivery_count"]) == (state, count)
        ):
            last["last_offset"] = offset
        else:
            merged.append(
                {
                    "first_offset": offset,
                    "last_offset": offset,
                    "delivery_state": state,
                    "delivery_count": count,
                }
            )
    complete = update.get("delivery_complete_count", -1)
    return snapshot | {
        "start_offset": start,
        "leader_epoch": snapshot["leader_epoch"] if update["leader_epoch"] == -1 else update["leader_epoch"],
        "delivery_complete_count": snapshot["delivery_complete_count"] if complete == -1 else complete,
        "state_batches": merged,
    }


def decode_record(key: bytes | None, value: bytes | None) -> ShareStateRecord:
    """ProtocolError for a record that is not a ShareSnapshot or ShareUpdate in Kafka's format."""
    if key is None or len(key) < 2:
        raise ProtocolError("a __share_group_state record without a key")
    kind = int.from_bytes(key[:2], "big")
    if kind not in (SNAPSHOT, UPDATE):
        raise ProtocolError(f"__share_group_state key version {kind} is not a ShareSnapshot or ShareUpdate")
    key_schema, value_schema = (
        (ShareUpdateKey, ShareUpdateValue) if kind == UPDATE else (ShareSnapshotKey, ShareSnapshotValue)
    )
    parsed = key_schema.parse(key[2:], kind)
    partition_key = SharePartitionKey(parsed.group_id, parsed.topic_id, parsed.partition)
    if value is None:
        return ShareStateRecord(partition_key, None, kind == UPDATE)
    version = int.from_bytes(value[:2], "big")
    if version != VALUE_VERSION:
        raise ProtocolError(f"unknown __share_group_state value version {version}")
    fields = value_schema.parse(value[2:], version)
    values = {f.name: fields[f.name] for f in value_schema.fields}
    # the batches as plain fields (merge_update reads them so, from either record)
    batch_fields = ("first_offset", "last_offset", "delivery_state", "delivery_count")
    values["state_batches"] = [{n: getattr(b, n) for n in batch_fields} for b in values["state_batches"]]
    return ShareStateRecord(partition_key, values, kind == UPDATE)
