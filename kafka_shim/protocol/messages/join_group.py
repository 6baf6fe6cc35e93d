"""JoinGroup (key 11): a member (re)joins a classic group and waits for the rebalance.

v4+: a first join with an empty member id is answered MEMBER_ID_REQUIRED with
the id to rejoin with. v5+: static membership (group_instance_id).
"""

from kafka_shim.protocol.api import Api
from kafka_shim.protocol.schema import BOOL, BYTES, INT16, INT32, STRING, Array, Field, Message, Names

JoinGroupRequest = Message(
    "JoinGroupRequest",
    versions="0-9",
    flexible="6+",
    fields=[
        Field("group_id", STRING, names=Names.GROUP),
        Field("session_timeout_ms", INT32),
        # Absent in v0, where the session timeout doubles as the rebalance timeout.
        Field("rebalance_timeout_ms", INT32, "1+", default=-1),
        Field("member_id", STRING),
        Field("group_instance_id", STRING, "5+", nullable="5+", default=None),
        Field("protocol_type", STRING),
        Field("protocols", Array(Field("name", STRING), Field("metadata", BYTES))),
        Field("reason", STRING, "8+", nullable="8+", default=None),
    ],
)

JoinGroupResponse = Message(
    "JoinGroupResponse",
    versions="0-9",
    flexible="6+",
    fields=[
        Field("throttle_time_ms", INT32, "2+"),
        Field("error_code", INT16),
        Field("generation_id", INT32, default=-1),
        Field("protocol_type", STRING, "7+", nullable="7+", default=None),
        Field("protocol_name", STRING, nullable="7+"),
        Field("leader", STRING),
        Field("skip_assignment", BOOL, "9+"),
        Field("member_id", STRING),
        Field(
            "members",
            Array(
                Field("member_id", STRING),
                Field("group_instance_id", STRING, "5+", nullable="5+", default=None),
                Field("metadata", BYTES),
            ),
        ),
    ],
)

API = Api(11, "JoinGroup", JoinGroupRequest, JoinGroupResponse)
