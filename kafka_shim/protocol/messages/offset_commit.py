"""OffsetCommit (key 8): a group member or a standalone consumer stores offsets.

v1 adds generation/member fencing and a per-partition commit timestamp (dropped
again in v2); v2-4 carry a retention time that v5 removes; v6 adds leader epochs; v10
(KIP-848, Kafka 4.2) names topics by id instead of by name.
"""

from kafka_shim.protocol.api import Api
from kafka_shim.protocol.messages.metadata import ZERO_UUID
from kafka_shim.protocol.schema import INT16, INT32, INT64, STRING, UUID, Array, Field, Message, Names

OffsetCommitRequest = Message(
    "OffsetCommitRequest",
    versions="0-10",
    flexible="8+",
    fields=[
        Field("group_id", STRING, names=Names.GROUP),
        Field("generation_id_or_member_epoch", INT32, "1+", default=-1),
        Field("member_id", STRING, "1+"),
        Field("group_instance_id", STRING, "7+", nullable="7+", default=None),
        Field("retention_time_ms", INT64, "2-4", default=-1),
        Field(
            "topics",
            Array(
                Field("name", STRING, "0-9", names=Names.TOPIC),
                Field("topic_id", UUID, "10+", default=ZERO_UUID, names=Names.TOPIC),
                Field(
                    "partitions",
                    Array(
                        Field("partition_index", INT32, names=Names.PARTITION),
                        Field("committed_offset", INT64),
                        Field("committed_leader_epoch", INT32, "6+", default=-1),
                        Field("commit_timestamp", INT64, "1", default=-1),
                        Field("committed_metadata", STRING, nullable="0+"),
                    ),
                ),
            ),
        ),
    ],
)

OffsetCommitResponse = Message(
    "OffsetCommitResponse",
    versions="0-10",
    flexible="8+",
    fields=[
        Field("throttle_time_ms", INT32, "3+"),
        Field(
            "topics",
            Array(
                Field("name", STRING, "0-9"),
                Field("topic_id", UUID, "10+", default=ZERO_UUID),
                Field("partitions", Array(Field("partition_index", INT32), Field("error_code", INT16))),
            ),
        ),
    ],
)

API = Api(8, "OffsetCommit", OffsetCommitRequest, OffsetCommitResponse)
