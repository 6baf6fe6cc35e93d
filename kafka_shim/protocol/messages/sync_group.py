"""SyncGroup (key 14): the leader hands in the assignment; every member receives its own.

v5+ carry the protocol type and name, which the coordinator checks (KIP-559).
"""

from kafka_shim.protocol.api import Api
from kafka_shim.protocol.schema import BYTES, INT16, INT32, STRING, Array, Field, Message, Names

SyncGroupRequest = Message(
    "SyncGroupRequest",
    versions="0-5",
    flexible="4+",
    fields=[
        Field("group_id", STRING, names=Names.GROUP),
        Field("generation_id", INT32),
        Field("member_id", STRING),
        Field("group_instance_id", STRING, "3+", nullable="3+", default=None),
        Field("protocol_type", STRING, "5+", nullable="5+", default=None),
        Field("protocol_name", STRING, "5+", nullable="5+", default=None),
        Field("assignments", Array(Field("member_id", STRING), Field("assignment", BYTES))),
    ],
)

SyncGroupResponse = Message(
    "SyncGroupResponse",
    versions="0-5",
    flexible="4+",
    fields=[
        Field("throttle_time_ms", INT32, "1+"),
        Field("error_code", INT16),
        Field("protocol_type", STRING, "5+", nullable="5+", default=None),
        Field("protocol_name", STRING, "5+", nullable="5+", default=None),
        Field("assignment", BYTES),
    ],
)

API = Api(14, "SyncGroup", SyncGroupRequest, SyncGroupResponse)
