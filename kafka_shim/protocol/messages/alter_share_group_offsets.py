"""AlterShareGroupOffsets (key 91): set the start offset of share partitions of an empty
share group (KIP-932's reset of a share group)."""

from kafka_shim.protocol.api import Api
from kafka_shim.protocol.messages.metadata import ZERO_UUID
from kafka_shim.protocol.schema import INT16, INT32, INT64, STRING, UUID, Array, Field, Message, Names

AlterShareGroupOffsetsRequest = Message(
    "AlterShareGroupOffsetsRequest",
    versions="0",
    flexible="0+",
    fields=[
        Field("group_id", STRING, names=Names.GROUP),
        Field(
            "topics",
            Array(
                Field("topic_name", STRING, names=Names.TOPIC),
                Field(
                    "partitions",
                    Array(
                        Field("partition_index", INT32, names=Names.PARTITION), Field("start_offset", INT64)
                    ),
                ),
            ),
        ),
    ],
)

AlterShareGroupOffsetsResponse = Message(
    "AlterShareGroupOffsetsResponse",
    versions="0",
    flexible="0+",
    fields=[
        Field("throttle_time_ms", INT32),
        Field("error_code", INT16),
        Field("error_message", STRING, nullable="0+", default=None),
        Field(
            "responses",
            Array(
                Field("topic_name", STRING),
                Field("topic_id", UUID, default=ZERO_UUID),
                Field(
                    "partitions",
                    Array(
                        Field("partition_index", INT32),
                        Field("error_code", INT16),
                        Field("error_message", STRING, nullable="0+", default=None),
                    ),
                ),
            ),
        ),
    ],
)

API = Api(91, "AlterShareGroupOffsets", AlterShareGroupOffsetsRequest, AlterShareGroupOffsetsResponse)
