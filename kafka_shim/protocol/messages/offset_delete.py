"""OffsetDelete (key 47): delete a group's committed offsets for partitions it no longer uses."""

from kafka_shim.protocol.api import Api
from kafka_shim.protocol.schema import INT16, INT32, STRING, Array, Field, Message

OffsetDeleteRequest = Message(
    "OffsetDeleteRequest",
    versions="0",
    flexible="none",
    fields=[
        Field("group_id", STRING),
        Field(
            "topics",
            Array(Field("name", STRING), Field("partitions", Array(Field("partition_index", INT32)))),
        ),
    ],
)

OffsetDeleteResponse = Message(
    "OffsetDeleteResponse",
    versions="0",
    flexible="none",
    fields=[
        Field("error_code", INT16),
        Field("throttle_time_ms", INT32),
        Field(
            "topics",
            Array(
                Field("name", STRING),
                Field(
                    "partitions",
                    Array(Field("partition_index", INT32), Field("error_code", INT16)),
                ),
            ),
        ),
    ],
)

API = Api(47, "OffsetDelete", OffsetDeleteRequest, OffsetDeleteResponse)
