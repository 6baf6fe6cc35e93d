"""OffsetDelete (key 47): delete a group's committed offsets for partitions it no longer uses."""

from kafka_shim.protocol.api import Api
from kafka_shim.protocol.schema import INT16, INT32, STRING, Array, Field, Message, Names

OffsetDeleteRequest = Message(
    "OffsetDeleteRequest",
    versions="0",
    flexible="none",
    fields=[
        Field("group_id", STRING, names=Names.GROUP),
        Field(
            "topics",
            Array(
                Field("name", STRING, names=Names.TOPIC),
                Field("partitions", Array(Field("partition_index", INT32, names=Names.PARTITION))),
            ),
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
