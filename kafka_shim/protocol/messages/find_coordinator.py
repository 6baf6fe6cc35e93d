"""FindCoordinator (key 10): which broker coordinates a group or transactional id.

v0-3 ask about one key; v4+ batch several keys of one type (KIP-699).
"""

from kafka_shim.protocol.api import Api
from kafka_shim.protocol.schema import INT8, INT16, INT32, STRING, Array, Field, Message, Names

# What a key names (key_type); 2, a share group's share-partition key (v6+), is not served here.
GROUP_KEY_TYPE, TRANSACTION_KEY_TYPE = 0, 1

FindCoordinatorRequest = Message(
    "FindCoordinatorRequest",
    versions="0-6",
    flexible="3+",
    fields=[
        Field("key", STRING, "0-3", names=Names.COORDINATOR_KEY),
        Field("key_type", INT8, "1+"),
        Field("coordinator_keys", Array(STRING), "4+", names=Names.COORDINATOR_KEY),
    ],
)

FindCoordinatorResponse = Message(
    "FindCoordinatorResponse",
    versions="0-6",
    flexible="3+",
    fields=[
        Field("throttle_time_ms", INT32, "1+"),
        Field("error_code", INT16, "0-3"),
        Field("error_message", STRING, "1-3", nullable="1-3", default=None),
        Field("node_id", INT32, "0-3"),
        Field("host", STRING, "0-3"),
        Field("port", INT32, "0-3"),
        Field(
            "coordinators",
            Array(
                Field("key", STRING, "4+"),
                Field("node_id", INT32, "4+"),
                Field("host", STRING, "4+"),
                Field("port", INT32, "4+"),
                Field("error_code", INT16, "4+"),
                Field("error_message", STRING, "4+", nullable="4+"),  # "" by default, as Kafka's JSON
            ),
            "4+",
        ),
    ],
)

API = Api(10, "FindCoordinator", FindCoordinatorRequest, FindCoordinatorResponse)
