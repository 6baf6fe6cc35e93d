"""LeaveGroup (key 13): v0-2 one member leaves; v3+ a batch (static members by instance id)."""

from kafka_shim.protocol.api import Api
from kafka_shim.protocol.schema import INT16, INT32, STRING, Array, Field, Message, Names

LeaveGroupRequest = Message(
    "LeaveGroupRequest",
    versions="0-5",
    flexible="4+",
    fields=[
        Field("group_id", STRING, names=Names.GROUP),
        Field("member_id", STRING, "0-2"),
        Field(
            "members",
            Array(
                Field("member_id", STRING, "3+"),
                Field("group_instance_id", STRING, "3+", nullable="3+", default=None),
                Field("reason", STRING, "5+", nullable="5+", default=None),
            ),
            "3+",
        ),
    ],
)

LeaveGroupResponse = Message(
    "LeaveGroupResponse",
    versions="0-5",
    flexible="4+",
    fields=[
        Field("throttle_time_ms", INT32, "1+"),
        Field("error_code", INT16),
        Field(
            "members",
            Array(
                Field("member_id", STRING, "3+"),
                Field("group_instance_id", STRING, "3+", nullable="3+", default=None),
                Field("error_code", INT16, "3+"),
            ),
            "3+",
        ),
    ],
)

API = Api(13, "LeaveGroup", LeaveGroupRequest, LeaveGroupResponse)
