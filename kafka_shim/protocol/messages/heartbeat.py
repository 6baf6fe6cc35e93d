"""Heartbeat (key 12): a member keeps its session alive and learns of rebalances."""

from kafka_shim.protocol.api import Api
from kafka_shim.protocol.schema import INT16, INT32, STRING, Field, Message, Names

HeartbeatRequest = Message(
    "HeartbeatRequest",
    versions="0-4",
    flexible="4+",
    fields=[
        Field("group_id", STRING, names=Names.GROUP),
        Field("generation_id", INT32),
        Field("member_id", STRING),
        Field("group_instance_id", STRING, "3+", nullable="3+", default=None),
    ],
)

HeartbeatResponse = Message(
    "HeartbeatResponse",
    versions="0-4",
    flexible="4+",
    fields=[
        Field("throttle_time_ms", INT32, "1+"),
        Field("error_code", INT16),
    ],
)

API = Api(12, "Heartbeat", HeartbeatRequest, HeartbeatResponse)
