"""DescribeGroups (key 15): state, protocol and members of groups."""

from kafka_shim.protocol.api import Api
from kafka_shim.protocol.schema import BOOL, BYTES, INT16, INT32, STRING, Array, Field, Message, Names

# Kafka's "not requested" value for authorized_operations.
AUTHORIZED_OPERATIONS_OMITTED = -(2**31)

DescribeGroupsRequest = Message(
    "DescribeGroupsRequest",
    versions="0-6",
    flexible="5+",
    fields=[
        Field("groups", Array(STRING), names=Names.GROUP),
        Field("include_authorized_operations", BOOL, "3+"),
    ],
)

DescribeGroupsResponse = Message(
    "DescribeGroupsResponse",
    versions="0-6",
    flexible="5+",
    fields=[
        Field("throttle_time_ms", INT32, "1+"),
        Field(
            "groups",
            Array(
                Field("error_code", INT16),
                Field("error_message", STRING, "6+", nullable="6+", default=None),  # KIP-1043 (4.0)
                Field("group_id", STRING),
                Field("group_state", STRING),
                Field("protocol_type", STRING),
                Field("protocol_data", STRING),
                Field(
                    "members",
                    Array(
                        Field("member_id", STRING),
                        Field("group_instance_id", STRING, "4+", nullable="4+", default=None),
                        Field("client_id", STRING),
                        Field("client_host", STRING),
                        Field("member_metadata", BYTES),
                        Field("member_assignment", BYTES),
                    ),
                ),
                Field("authorized_operations", INT32, "3+", default=AUTHORIZED_OPERATIONS_OMITTED),
            ),
        ),
    ],
)

API = Api(15, "DescribeGroups", DescribeGroupsRequest, DescribeGroupsResponse)
