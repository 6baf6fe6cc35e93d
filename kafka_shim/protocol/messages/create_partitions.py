"""CreatePartitions (key 37): grow a topic's partition count."""

from kafka_shim.protocol.api import Api
from kafka_shim.protocol.schema import BOOL, INT16, INT32, STRING, Array, Field, Message, Names

CreatePartitionsRequest = Message(
    "CreatePartitionsRequest",
    versions="0-3",
    flexible="2+",
    fields=[
        Field(
            "topics",
            Array(
                Field("name", STRING, names=Names.TOPIC),
                Field("count", INT32),
                Field("assignments", Array(Field("broker_ids", Array(INT32))), nullable="0+"),
            ),
        ),
        Field("timeout_ms", INT32),
        Field("validate_only", BOOL),
    ],
)

CreatePartitionsResponse = Message(
    "CreatePartitionsResponse",
    versions="0-3",
    flexible="2+",
    fields=[
        Field("throttle_time_ms", INT32),
        Field(
            "results",
            Array(
                Field("name", STRING),
                Field("error_code", INT16),
                Field("error_message", STRING, nullable="0+", default=None),
            ),
        ),
    ],
)

API = Api(37, "CreatePartitions", CreatePartitionsRequest, CreatePartitionsResponse)
