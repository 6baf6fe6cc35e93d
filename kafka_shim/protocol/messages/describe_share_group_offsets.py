"""DescribeShareGroupOffsets (key 90): the start offset of each share partition of share
groups (KIP-932's OffsetFetch). v1 (Kafka 4.2, KIP-1226) adds each partition's lag."""

from kafka_shim.protocol.api import Api
from kafka_shim.protocol.messages.metadata import ZERO_UUID
from kafka_shim.protocol.schema import INT16, INT32, INT64, STRING, UUID, Array, Field, Message, Names

DescribeShareGroupOffsetsRequest = Message(
    "DescribeShareGroupOffsetsRequest",
    versions="0-1",
    flexible="0+",
    fields=[
        Field(
            "groups",
            Array(
                Field("group_id", STRING, names=Names.GROUP),
                # null: every topic-partition the group has state for
                Field(
                    "topics",
                    Array(
                        Field("topic_name", STRING, names=Names.TOPIC),
                        Field("partitions", Array(INT32), names=Names.PARTITION),
                    ),
                    nullable="0+",
                ),
            ),
        )
    ],
)

DescribeShareGroupOffsetsResponse = Message(
    "DescribeShareGroupOffsetsResponse",
    versions="0-1",
    flexible="0+",
    fields=[
        Field("throttle_time_ms", INT32),
        Field(
            "groups",
            Array(
                Field("group_id", STRING),
                Field(
                    "topics",
                    Array(
                        Field("topic_name", STRING),
                        Field("topic_id", UUID, default=ZERO_UUID),
                        Field(
                            "partitions",
                            Array(
                                Field("partition_index", INT32),
                                Field("start_offset", INT64),
                                Field("leader_epoch", INT32),
                                Field("lag", INT64, "1+", default=-1),
                                Field("error_code", INT16),
                                Field("error_message", STRING, nullable="0+", default=None),
                            ),
                        ),
                    ),
                ),
                Field("error_code", INT16),
                Field("error_message", STRING, nullable="0+", default=None),
            ),
        ),
    ],
)

API = Api(
    90, "DescribeShareGroupOffsets", DescribeShareGroupOffsetsRequest, DescribeShareGroupOffsetsResponse
)
