"""DeleteGroups (key 42): delete empty groups and their committed offsets."""

from kafka_shim.protocol.api import Api
from kafka_shim.protocol.schema import INT16, INT32, STRING, Array, Field, Message, Names

DeleteGroupsRequest = Message(
    "DeleteGroupsRequest",
    versions="0-2",
    flexible="2+",
    fields=[Field("groups_names", Array(STRING), names=Names.GROUP)],
)

DeleteGroupsResponse = Message(
    "DeleteGroupsResponse",
    versions="0-2",
    flexible="2+",
    fields=[
        Field("throttle_time_ms", INT32),
        Field("results", Array(Field("group_id", STRING), Field("error_code", INT16))),
    ],
)

API = Api(42, "DeleteGroups", DeleteGroupsRequest, DeleteGroupsResponse)
