"""ListGroups (key 16): the groups this coordinator knows (v4+ filter by state, v5+ by type)."""

from kafka_shim.protocol.api import Api
from kafka_shim.protocol.schema import INT16, INT32, STRING, Array, Field, Message

ListGroupsRequest = Message(
    "ListGroupsRequest",
    versions="0-5",
    flexible="3+",
    fields=[
        Field("states_filter", Array(STRING), "4+"),
        Field("types_filter", Array(STRING), "5+"),
    ],
)

ListGroupsResponse = Message(
    "ListGroupsResponse",
    versions="0-5",
    flexible="3+",
    fields=[
        Field("throttle_time_ms", INT32, "1+"),
        Field("error_code", INT16),
        Field(
            "groups",
            Array(
                Field("group_id", STRING),
                Field("protocol_type", STRING),
                Field("group_state", STRING, "4+"),
                Field("group_type", STRING, "5+"),
            ),
        ),
    ],
)

API = Api(16, "ListGroups", ListGroupsRequest, ListGroupsResponse)
