"""ShareGroupDescribe (key 77): KIP-932's DescribeGroups for share groups (v1, the first
stable version; v0 was Kafka 4.0's early access)."""

from kafka_shim.protocol.api import Api
from kafka_shim.protocol.messages.consumer_group_describe import AUTHORIZED_OPERATIONS_OMITTED, NO_ASSIGNMENT
from kafka_shim.protocol.messages.metadata import ZERO_UUID
from kafka_shim.protocol.schema import BOOL, INT16, INT32, STRING, UUID, Array, Field, Message, Names, Struct

ShareGroupDescribeRequest = Message(
    "ShareGroupDescribeRequest",
    versions="1",
    flexible="1+",
    fields=[
        Field("group_ids", Array(STRING), names=Names.GROUP),
        Field("include_authorized_operations", BOOL),
    ],
)

_ASSIGNMENT = Struct(
    [
        Field(
            "topic_partitions",
            Array(
                Field("topic_id", UUID, default=ZERO_UUID),
                Field("topic_name", STRING),
                Field("partitions", Array(INT32)),
            ),
        )
    ]
)

ShareGroupDescribeResponse = Message(
    "ShareGroupDescribeResponse",
    versions="1",
    flexible="1+",
    fields=[
        Field("throttle_time_ms", INT32),
        Field(
            "groups",
            Array(
                Field("error_code", INT16),
                Field("error_message", STRING, nullable="1+", default=None),
                Field("group_id", STRING),
                Field("group_state", STRING),
                Field("group_epoch", INT32),
                Field("assignment_epoch", INT32),
                Field("assignor_name", STRING),
                Field(
                    "members",
                    Array(
                        Field("member_id", STRING),
                        Field("rack_id", STRING, nullable="1+", default=None),
                        Field("member_epoch", INT32),
                        Field("client_id", STRING),
                        Field("client_host", STRING),
                        Field("subscribed_topic_names", Array(STRING)),
                        Field("assignment", _ASSIGNMENT, default=NO_ASSIGNMENT),
                    ),
                ),
                Field("authorized_operations", INT32, default=AUTHORIZED_OPERATIONS_OMITTED),
            ),
        ),
    ],
)

API = Api(77, "ShareGroupDescribe", ShareGroupDescribeRequest, ShareGroupDescribeResponse)
