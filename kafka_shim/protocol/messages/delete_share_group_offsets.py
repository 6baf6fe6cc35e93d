"""DeleteShareGroupOffsets (key 92): forget an empty share group's state for whole topics."""

from kafka_shim.protocol.api import Api
from kafka_shim.protocol.messages.metadata import ZERO_UUID
from kafka_shim.protocol.schema import INT16, INT32, STRING, UUID, Array, Field, Message, Names

DeleteShareGroupOffsetsRequest = Message(
    "DeleteShareGroupOffsetsRequest",
    versions="0",
    flexible="0+",
    fields=[
        Field("group_id", STRING, names=Names.GROUP),
        Field("topics", Array(Field("topic_name", STRING, names=Names.TOPIC))),
    ],
)

DeleteShareGroupOffsetsResponse = Message(
    "DeleteShareGroupOffsetsResponse",
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
                Field("error_code", INT16),
                Field("error_message", STRING, nullable="0+", default=None),
            ),
        ),
    ],
)

API = Api(92, "DeleteShareGroupOffsets", DeleteShareGroupOffsetsRequest, DeleteShareGroupOffsetsResponse)
