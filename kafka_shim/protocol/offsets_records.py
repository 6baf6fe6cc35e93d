"""The records of `__consumer_offsets`, in Kafka's own key and value formats.

Not APIs (so they live outside `protocol.messages`, which API discovery
walks): these are the record keys and values Kafka's group coordinator writes,
each serialised as an int16 version followed by the declared struct. The key
version says what a record is: 0 and 1 an offset commit (Kafka writes 1),
2 group metadata. A null value is a tombstone. Consumers of the topic (kcat,
Kafka's own console formatters, the tests) decode them with these schemas.

Kafka writes OffsetCommitValue v1 when the commit carried its own expiry
(OffsetCommit v2-4 retention time), v3 otherwise, and GroupMetadataValue v3;
so does this broker. Every version 0-4 decodes.
"""

from __future__ import annotations

import functools
import struct
from dataclasses import dataclass
from typing import Any, Final, NamedTuple

from kafka_shim.protocol import consumer_group_records as consumer
from kafka_shim.protocol.consumer_group_records import ConsumerGroupKey, ConsumerGroupValue
from kafka_shim.protocol.records import NO_PRODUCER_EPOCH, NO_PRODUCER_ID
from kafka_shim.protocol.schema import BYTES, INT32, INT64, STRING, Array, Field, Message
from kafka_shim.protocol.types import ProtocolError

OffsetCommitKey = Message(
    "OffsetCommitKey",
    versions="0-1",
    flexible="none",
    fields=[Field("group", STRING), Field("topic", STRING), Field("partition", INT32)],
)

OffsetCommitValue = Message(
    "OffsetCommitValue",
    versions="0-4",
    flexible="4+",
    fields=[
        Field("offset", INT64),
        Field("leader_epoch", INT32, "3+", default=-1),
        Field("metadata", STRING),
        Field("commit_timestamp", INT64),
        Field("expire_timestamp", INT64, "1", default=-1),
    ],
)

GroupMetadataKey = Message("GroupMetadataKey", versions="2", flexible="none", fields=[Field("group", STRING)])

GroupMetadataValue = Message(
    "GroupMetadataValue",
    versions="0-4",
    flexible="4+",
    fields=[
        Field("protocol_type", STRING),
        Field("generation", INT32),
        Field("protocol", STRING, nullable="0+", default=None),
        Field("leader", STRING, nullable="0+", default=None),
        Field("current_state_timestamp", INT64, "2+", default=-1),
        Field(
            "members",
            Array(
                Field("member_id", STRING),
                Field("group_instance_id", STRING, "3+", nullable="3+", default=None),
                Field("client_id", STRING),
                Field("client_host", STRING),
                Field("rebalance_timeout", INT32, "1+"),
                Field("session_timeout", INT32),
                Field("subscription", BYTES),
                Field("assignment", BYTES),
            ),
        ),
    ],
)

OFFSET_KEY_VERSION: Final = 1
GROUP_KEY_VERSION: Final = 2
OFFSET_VALUE_VERSION: Final = 3
OFFSET_VALUE_WITH_EXPIRY_VERSION: Final = 1
GROUP_VALUE_VERSION: Final = 3
NO_EXPIRY: Final = -1

_VERSION = struct.Struct(">h")
# OffsetCommitValue v3 up to its metadata's bytes (version, offset, leader_epoch, metadata
# length), then its commit_timestamp: what every commit without its own expiry writes, packed
# without the schema walk (a third of the cost). test_offsets_records checks it against
# OffsetCommitValue.build for every kind of value.
_OFFSET_VALUE_V3_HEAD = struct.Struct(">hqih")
# The whole value when its metadata is empty (librdkafka's commits): one pack.
_OFFSET_VALUE_V3_NO_METADATA = struct.Struct(">hqihq")
_INT64 = struct.Struct(">q")
_INT16_MAX = 0x7FFF


# Offset keys and values, and the records holding them, are tuples: the coordinator makes
# one of each for every offset committed (frozen dataclasses cost a microsecond apiece).
class OffsetKey(NamedTuple):
    group: str
    topic: str
    partition: int


class GroupKey(NamedTuple):
    group: str


class OffsetValue(NamedTuple):
    offset: int
    leader_epoch: int
    metadata: str
    commit_timestamp: int
    expire_timestamp: int | None = None  # only commits that asked for their own retention


@dataclass(frozen=True, slots=True)
class MemberValue:
    member_id: str
    group_instance_id: str | None
    client_id: str
    client_host: str
    rebalance_timeout: int
    session_timeout: int
    subscription: bytes
    assignment: bytes


@dataclass(frozen=True, slots=True)
class GroupValue:
    protocol_type: str
    generation: int
    protocol: str | None
    leader: str | None
    current_state_timestamp: int
    members: tuple[MemberValue, ...] = ()


# KIP-848 consumer groups' records (keys 3-8 and 16) are declared in protocol.consumer_group_records.
Key = OffsetKey | GroupKey | ConsumerGroupKey
Value = OffsetValue | GroupValue | ConsumerGroupValue


class OffsetsRecord(NamedTuple):
    """One record of the offsets log; `value` None is a tombstone.

    An offset committed inside a transaction (TxnOffsetCommit) names its producer:
    it is written in a transactional batch of that producer id and epoch, and counts
    only once a COMMIT marker of that producer follows it in the log."""

    key: Key
    value: Value | None
    producer_id: int = NO_PRODUCER_ID
    producer_epoch: int = NO_PRODUCER_EPOCH

    @property
    def is_transactional(self) -> bool:
        return self.producer_id != NO_PRODUCER_ID

    @property
    def group(self) -> str:
        return self.key.group


def _versioned(message: Message, version: int, fields: dict[str, Any]) -> bytes:
    return _VERSION.pack(version) + message.build(fields, version)


def _split(data: bytes, what: str) -> tuple[int, bytes]:
    if len(data) < _VERSION.size:
        raise ProtocolError(f"{what} of {len(data)} bytes has no version")
    return _VERSION.unpack_from(data)[0], data[_VERSION.size :]


@functools.lru_cache(maxsize=4096)
def encode_key(key: Key) -> bytes:
    """Cached: a consumer commits the same partitions' keys over and over. An entry keeps its
    key alive too (about 320 bytes in all), and every group, topic and partition committed to
    takes one, those of groups long deleted included: at 65,536 entries the cache held 20 MiB
    for good once clients that name their groups anew (the soak's churn) had filled it."""
    if isinstance(key, OffsetKey):
        fields = {"group": key.group, "topic": key.topic, "partition": key.partition}
        return _versioned(OffsetCommitKey, OFFSET_KEY_VERSION, fields)
    if isinstance(key, ConsumerGroupKey):
        return consumer.encode_key(key)
    return _versioned(GroupMetadataKey, GROUP_KEY_VERSION, {"group": key.group})


def encode_value(value: Value | None, key: Key | None = None) -> bytes | None:
    """`key` is needed only for a consumer-group value, whose format its key's type decides."""
    # A commit's value first (every commit writes one), packed without the schema.
    if type(value) is OffsetValue and value.expire_timestamp is None and type(value.metadata) is str:
        if not value.metadata:
            return _OFFSET_VALUE_V3_NO_METADATA.pack(
                OFFSET_VALUE_VERSION, value.offset, value.leader_epoch, 0, value.commit_timestamp
            )
        metadata = value.metadata.encode("utf-8")
        if len(metadata) <= _INT16_MAX:  # a longer one: the schema's own error, below
            head = _OFFSET_VALUE_V3_HEAD.pack(
                OFFSET_VALUE_VERSION, value.offset, value.leader_epoch, len(metadata)
            )
            return b"".join((head, metadata, _INT64.pack(value.commit_timestamp)))
    if value is None:
        return None
    if isinstance(value, ConsumerGroupValue):
        assert isinstance(key, ConsumerGroupKey)
        return consumer.encode_value(key.record_type, value)
    if isinstance(value, OffsetValue):
        expiring = value.expire_timestamp is not None
        fields = {
            "offset": value.offset,
            "leader_epoch": value.leader_epoch,
            "metadata": value.metadata,
            "commit_timestamp": value.commit_timestamp,
            "expire_timestamp": value.expire_timestamp if expiring else NO_EXPIRY,
        }
        version = OFFSET_VALUE_WITH_EXPIRY_VERSION if expiring else OFFSET_VALUE_VERSION
        return _versioned(OffsetCommitValue, version, fields)
    fields = {
        "protocol_type": value.protocol_type,
        "generation": value.generation,
        "protocol": value.protocol,
        "leader": value.leader,
        "current_state_timestamp": value.current_state_timestamp,
        "members": [_member_fields(m) for m in value.members],
    }
    return _versioned(GroupMetadataValue, GROUP_VALUE_VERSION, fields)


def _member_fields(member: MemberValue) -> dict[str, Any]:
    return {name: getattr(member, name) for name in MemberValue.__slots__}


def decode_key(data: bytes) -> Key:
    version, body = _split(data, "key")
    if version in OffsetCommitKey.versions:
        parsed = OffsetCommitKey.parse(body, version)
        return OffsetKey(parsed.group, parsed.topic, parsed.partition)
    if version in GroupMetadataKey.versions:
        return GroupKey(GroupMetadataKey.parse(body, version).group)
    if version in consumer.KEYS:
        return consumer.decode_key(version, body)
    raise ProtocolError(f"unknown __consumer_offsets key version {version}")


def decode_value(key: Key, data: bytes | None) -> Value | None:
    if data is None:
        return None
    version, body = _split(data, "value")
    if isinstance(key, OffsetKey):
        v = OffsetCommitValue.parse(body, version)
        expiry = None if v.expire_timestamp == NO_EXPIRY else v.expire_timestamp
        return OffsetValue(v.offset, v.leader_epoch, v.metadata, v.commit_timestamp, expiry)
    if isinstance(key, ConsumerGroupKey):
        return consumer.decode_value(key.record_type, version, body)
    g = GroupMetadataValue.parse(body, version)
    members = tuple(MemberValue(**{name: m[name] for name in MemberValue.__slots__}) for m in g.members)
    return GroupValue(g.protocol_type, g.generation, g.protocol, g.leader, g.current_state_timestamp, members)


def encode_record(record: OffsetsRecord) -> tuple[bytes, bytes | None]:
    return encode_key(record.key), encode_value(record.value, record.key)


def decode_record(key: bytes | None, value: bytes | None) -> OffsetsRecord:
    """ProtocolError for a record that is not Kafka's (no key, unknown key version, bad bytes)."""
    if key is None:
        raise ProtocolError("an offsets record without a key")
    decoded = decode_key(key)
    return OffsetsRecord(decoded, decode_value(decoded, value))
