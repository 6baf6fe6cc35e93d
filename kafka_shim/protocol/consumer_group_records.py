"""The KIP-848 consumer-group records of `__consumer_offsets`, in Kafka's own formats.

As in `protocol.offsets_records`, each key and value is an int16 version followed by the
declared struct; the key's version says what the record is (Kafka 4's record types):

  3 ConsumerGroupMetadata            value: the group epoch
  4 ConsumerGroupPartitionMetadata   value: the subscribed topics' ids and partition counts
  5 ConsumerGroupMemberMetadata      value: a member's ids, subscription, assignor
  6 ConsumerGroupTargetAssignmentMetadata  value: the target assignment's epoch
  7 ConsumerGroupTargetAssignmentMember    value: one member's target partitions
  8 ConsumerGroupCurrentMemberAssignment   value: one member's epochs, state, partitions
  16 ConsumerGroupRegularExpression  value: the topics a subscription regex matched

and KIP-932's share groups, in the same form:

  10 ShareGroupMemberMetadata        value: a member's rack, client, subscription
  11 ShareGroupMetadata              value: the group epoch
  12 ShareGroupTargetAssignmentMetadata  value: the target assignment's epoch
  13 ShareGroupTargetAssignmentMember    value: one member's target partitions
  14 ShareGroupCurrentMemberAssignment   value: one member's epochs, state, partitions

Every value is version 0 (flexible). A null value is a tombstone. Tagged fields Kafka added
later (ConsumerGroupMetadataValue's MetadataHash, assignment epochs) are skipped on read,
as Kafka skips tags it does not know, and never written; a classic member's metadata (tag 0
of MemberMetadata) is kept.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any, Final

from kafka_shim.protocol.messages.metadata import ZERO_UUID
from kafka_shim.protocol.schema import BYTES, INT8, INT32, INT64, STRING, UUID, Array, Field, Message, Struct

VALUE_VERSION: Final = 0


def _key(name: str, version: int, *fields: str) -> Message:
    return Message(name, versions=str(version), flexible="none", fields=[Field(f, STRING) for f in fields])


def _topic_partitions() -> Array:
    return Array(Field("topic_id", UUID, default=ZERO_UUID), Field("partitions", Array(INT32)))


def _value(name: str, fields: list[Field]) -> Message:
    return Message(name, versions="0", flexible="0+", fields=fields)


GROUP_METADATA: Final = 3
PARTITION_METADATA: Final = 4
MEMBER_METADATA: Final = 5
TARGET_ASSIGNMENT_METADATA: Final = 6
TARGET_ASSIGNMENT_MEMBER: Final = 7
CURRENT_MEMBER_ASSIGNMENT: Final = 8
REGULAR_EXPRESSION: Final = 16
SHARE_MEMBER_METADATA: Final = 10
SHARE_GROUP_METADATA: Final = 11
SHARE_TARGET_ASSIGNMENT_METADATA: Final = 12
SHARE_TARGET_ASSIGNMENT_MEMBER: Final = 13
SHARE_CURRENT_MEMBER_ASSIGNMENT: Final = 14

KEYS: Final[dict[int, Message]] = {
    GROUP_METADATA: _key("ConsumerGroupMetadataKey", GROUP_METADATA, "group_id"),
    PARTITION_METADATA: _key("ConsumerGroupPartitionMetadataKey", PARTITION_METADATA, "group_id"),
    MEMBER_METADATA: _key("ConsumerGroupMemberMetadataKey", MEMBER_METADATA, "group_id", "member_id"),
    TARGET_ASSIGNMENT_METADATA: _key(
        "ConsumerGroupTargetAssignmentMetadataKey", TARGET_ASSIGNMENT_METADATA, "group_id"
    ),
    TARGET_ASSIGNMENT_MEMBER: _key(
        "ConsumerGroupTargetAssignmentMemberKey", TARGET_ASSIGNMENT_MEMBER, "group_id", "member_id"
    ),
    CURRENT_MEMBER_ASSIGNMENT: _key(
        "ConsumerGroupCurrentMemberAssignmentKey", CURRENT_MEMBER_ASSIGNMENT, "group_id", "member_id"
    ),
    REGULAR_EXPRESSION: _key(
        "ConsumerGroupRegularExpressionKey", REGULAR_EXPRESSION, "group_id", "regular_expression"
    ),
    SHARE_MEMBER_METADATA: _key(
        "ShareGroupMemberMetadataKey", SHARE_MEMBER_METADATA, "group_id", "member_id"
    ),
    SHARE_GROUP_METADATA: _key("ShareGroupMetadataKey", SHARE_GROUP_METADATA, "group_id"),
    SHARE_TARGET_ASSIGNMENT_METADATA: _key(
        "ShareGroupTargetAssignmentMetadataKey", SHARE_TARGET_ASSIGNMENT_METADATA, "group_id"
    ),
    SHARE_TARGET_ASSIGNMENT_MEMBER: _key(
        "ShareGroupTargetAssignmentMemberKey", SHARE_TARGET_ASSIGNMENT_MEMBER, "group_id", "member_id"
    ),
    SHARE_CURRENT_MEMBER_ASSIGNMENT: _key(
        "ShareGroupCurrentMemberAssignmentKey", SHARE_CURRENT_MEMBER_ASSIGNMENT, "group_id", "member_id"
    ),
}

VALUES: Final[dict[int, Message]] = {
    GROUP_METADATA: _value("ConsumerGroupMetadataValue", [Field("epoch", INT32)]),
    PARTITION_METADATA: _value(
        "ConsumerGroupPartitionMetadataValue",
        [
            Field(
                "topics",
                Array(
                    Field("topic_id", UUID, default=ZERO_UUID),
                    Field("topic_name", STRING),
                    Field("num_partitions", INT32),
                    # racks per partition; empty here: rack-aware metadata means nothing on one broker
                    Field(
                        "partition_metadata",
                        Array(Field("partition", INT32), Field("racks", Array(STRING))),
                    ),
                ),
            )
        ],
    ),
    MEMBER_METADATA: _value(
        "ConsumerGroupMemberMetadataValue",
        [
            Field("instance_id", STRING, nullable="0+", default=None),
            Field("rack_id", STRING, nullable="0+", default=None),
            Field("client_id", STRING),
            Field("client_host", STRING),
            Field("subscribed_topic_names", Array(STRING)),
            Field("subscribed_topic_regex", STRING, nullable="0+", default=None),
            Field("rebalance_timeout_ms", INT32, default=-1),
            Field("server_assignor", STRING, nullable="0+", default=None),
            # a member that uses the classic protocol (KIP-848's online migration); null otherwise
            Field(
                "classic_member_metadata",
                Struct(
                    [
                        Field("session_timeout_ms", INT32),
                        Field("supported_protocols", Array(Field("name", STRING), Field("metadata", BYTES))),
                    ]
                ),
                nullable="0+",
                tag=0,
                default=None,
            ),
        ],
    ),
    TARGET_ASSIGNMENT_METADATA: _value(
        "ConsumerGroupTargetAssignmentMetadataValue", [Field("assignment_epoch", INT32)]
    ),
    TARGET_ASSIGNMENT_MEMBER: _value(
        "ConsumerGroupTargetAssignmentMemberValue", [Field("topic_partitions", _topic_partitions())]
    ),
    CURRENT_MEMBER_ASSIGNMENT: _value(
        "ConsumerGroupCurrentMemberAssignmentValue",
        [
            Field("member_epoch", INT32),
            Field("previous_member_epoch", INT32),
            Field("state", INT8),
            Field("assigned_partitions", _topic_partitions()),
            Field("partitions_pending_revocation", _topic_partitions()),
        ],
    ),
    REGULAR_EXPRESSION: _value(
        "ConsumerGroupRegularExpressionValue",
        [Field("topics", Array(STRING)), Field("version", INT64), Field("timestamp", INT64)],
    ),
    SHARE_MEMBER_METADATA: _value(
        "ShareGroupMemberMetadataValue",
        [
            Field("rack_id", STRING, nullable="0+", default=None),
            Field("client_id", STRING),
            Field("client_host", STRING),
            Field("subscribed_topic_names", Array(STRING)),
        ],
    ),
    SHARE_GROUP_METADATA: _value("ShareGroupMetadataValue", [Field("epoch", INT32)]),
    SHARE_TARGET_ASSIGNMENT_METADATA: _value(
        "ShareGroupTargetAssignmentMetadataValue", [Field("assignment_epoch", INT32)]
    ),
    SHARE_TARGET_ASSIGNMENT_MEMBER: _value(
        "ShareGroupTargetAssignmentMemberValue", [Field("topic_partitions", _topic_partitions())]
    ),
    SHARE_CURRENT_MEMBER_ASSIGNMENT: _value(
        "ShareGroupCurrentMemberAssignmentValue",
        [
            Field("member_epoch", INT32),
            Field("previous_member_epoch", INT32),
            Field("state", INT8),
            Field("assigned_partitions", _topic_partitions()),
        ],
    ),
}

# topic id -> partitions, the form every assignment takes in these records and in the APIs.
Partitions = dict[uuid.UUID, frozenset[int]]


@dataclass(frozen=True, slots=True)
class ConsumerGroupKey:
    """The key of a consumer-group record: its type, the group, and the member id or regex."""

    record_type: int
    group: str
    sub_key: str = ""  # member id (types 5, 7, 8) or regular expression (16)


@dataclass(frozen=True, slots=True)
class ConsumerGroupValue:
    """A decoded value: its fields by the declared names (`Partitions` for partition lists)."""

    fields: dict[str, Any]


def partitions_to_wire(partitions: Partitions) -> list[dict[str, Any]]:
    return [
        {"topic_id": topic_id, "partitions": sorted(parts)}
        for topic_id, parts in sorted(partitions.items())
        if parts
    ]


def partitions_from_wire(topics: list[Any]) -> Partitions:
    return {t.topic_id: frozenset(t.partitions) for t in topics if t.partitions}


_PARTITION_FIELDS = ("topic_partitions", "assigned_partitions", "partitions_pending_revocation")


def encode_key(key: ConsumerGroupKey) -> bytes:
    message = KEYS[key.record_type]
    names = [f.name for f in message.fields]
    values = {"group_id": key.group}
    if len(names) > 1:
        values[names[1]] = key.sub_key
    return key.record_type.to_bytes(2, "big") + message.build(values, key.record_type)


def decode_key(record_type: int, body: bytes) -> ConsumerGroupKey:
    message = KEYS[record_type]
    parsed = message.parse(body, record_type)
    sub_key = parsed[message.fields[1].name] if len(message.fields) > 1 else ""
    return ConsumerGroupKey(record_type, parsed.group_id, sub_key)


def encode_value(record_type: int, value: ConsumerGroupValue) -> bytes:
    fields = dict(value.fields)
    for name in _PARTITION_FIELDS:
        if name in fields:
            fields[name] = partitions_to_wire(fields[name])
    return VALUE_VERSION.to_bytes(2, "big") + VALUES[record_type].build(fields, VALUE_VERSION)


def decode_value(record_type: int, version: int, body: bytes) -> ConsumerGroupValue:
    parsed = VALUES[record_type].parse(body, version)
    fields = {f.name: parsed[f.name] for f in VALUES[record_type].fields}
    for name in _PARTITION_FIELDS:
        if name in fields:
            fields[name] = partitions_from_wire(fields[name])
    return ConsumerGroupValue(fields)
