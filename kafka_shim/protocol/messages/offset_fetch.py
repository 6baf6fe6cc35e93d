"""OffsetFetch (key 9): committed offsets of a group (v8+: of several groups).

v2+ accept null topics for "every committed partition" and answer a top-level
error code; v7 adds require_stable; v8 moves everything into a `groups` array; v10 (KIP-848,
Kafka 4.2) names topics by id instead of by name.
The per-topic shapes are the same before and after v8, only their version
ranges differ, so they are built by one function per shape.
"""

from kafka_shim.protocol.api import Api
from kafka_shim.protocol.messages.metadata import ZERO_UUID
from kafka_shim.protocol.schema import BOOL, INT16, INT32, INT64, STRING, UUID, Array, Field, Message, Names


def _topic_key(versions: str, name_versions: str) -> list[Field]:
    """A topic's name; from v10 (KIP-848, Kafka 4.2) its id instead."""
    if name_versions == versions:
        return [Field("name", STRING, versions, names=Names.TOPIC)]
    return [
        Field("name", STRING, name_versions, names=Names.TOPIC),
        Field("topic_id", UUID, "10+", default=ZERO_UUID, names=Names.TOPIC),
    ]


def _request_topics(versions: str, nullable: str, name_versions: str) -> Field:
    return Field(
        "topics",
        Array(
            *_topic_key(versions, name_versions),
            Field("partition_indexes", Array(INT32), versions, names=Names.PARTITION),
        ),
        versions,
        nullable=nullable,
    )


def _response_topics(versions: str, leader_epoch_versions: str, name_versions: str) -> Field:
    partition = Array(
        Field("partition_index", INT32, versions),
        Field("committed_offset", INT64, versions),
        Field("committed_leader_epoch", INT32, leader_epoch_versions, default=-1),
        Field("metadata", STRING, versions, nullable=versions),
        Field("error_code", INT16, versions),
    )
    return Field(
        "topics",
        Array(*_topic_key(versions, name_versions), Field("partitions", partition, versions)),
        versions,
    )


OffsetFetchRequest = Message(
    "OffsetFetchRequest",
    versions="0-10",
    flexible="6+",
    fields=[
        Field("group_id", STRING, "0-7", names=Names.GROUP),
        _request_topics("0-7", nullable="2-7", name_versions="0-7"),
        Field(
            "groups",
            Array(
                Field("group_id", STRING, "8+", names=Names.GROUP),
                Field("member_id", STRING, "9+", nullable="9+", default=None),
                Field("member_epoch", INT32, "9+", default=-1),
                _request_topics("8+", nullable="8+", name_versions="8-9"),
            ),
            "8+",
        ),
        Field("require_stable", BOOL, "7+"),
    ],
)

OffsetFetchResponse = Message(
    "OffsetFetchResponse",
    versions="0-10",
    flexible="6+",
    fields=[
        Field("throttle_time_ms", INT32, "3+"),
        _response_topics("0-7", leader_epoch_versions="5-7", name_versions="0-7"),
        Field("error_code", INT16, "2-7"),
        Field(
            "groups",
            Array(
                Field("group_id", STRING, "8+"),
                _response_topics("8+", leader_epoch_versions="8+", name_versions="8-9"),
                Field("error_code", INT16, "8+"),
            ),
            "8+",
        ),
    ],
)

API = Api(9, "OffsetFetch", OffsetFetchRequest, OffsetFetchResponse)
