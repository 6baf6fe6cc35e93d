"""DeleteTopics (key 20): by name, and from v6 by name or topic id. v0 (deprecated in
Kafka 3.x, removed in 4.0) is v1 without the throttle time."""

from kafka_shim.protocol.api import Api
from kafka_shim.protocol.messages.metadata import ZERO_UUID
from kafka_shim.protocol.schema import INT16, INT32, STRING, UUID, Array, Field, Message, Names

DeleteTopicsRequest = Message(
    "DeleteTopicsRequest",
    versions="0-6",
    flexible="4+",
    fields=[
        Field(
            "topics",
            Array(
                Field("name", STRING, nullable="6+", default=None, names=Names.TOPIC),
                Field("topic_id", UUID, default=ZERO_UUID, names=Names.TOPIC),
            ),
            "6+",
        ),
        Field("topic_names", Array(STRING), "0-5", names=Names.TOPIC),
        Field("timeout_ms", INT32),
    ],
)

DeleteTopicsResponse = Message(
    "DeleteTopicsResponse",
    versions="0-6",
    flexible="4+",
    fields=[
        Field("throttle_time_ms", INT32, "1+"),
        Field(
            "responses",
            Array(
                Field("name", STRING, nullable="6+"),
                Field("topic_id", UUID, "6+", default=ZERO_UUID),
                Field("error_code", INT16),
                Field("error_message", STRING, "5+", nullable="5+", default=None),
            ),
        ),
    ],
)

API = Api(20, "DeleteTopics", DeleteTopicsRequest, DeleteTopicsResponse)
