"""ConsumerGroupDescribe (key 69): KIP-848's DescribeGroups, with epochs and target
assignments. v1 adds each member's type (KIP-1099: 0 classic, 1 consumer)."""

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from kafka_shim.protocol.api import Api
from kafka_shim.protocol.messages.metadata import ZERO_UUID
from kafka_shim.protocol.schema import (
    BOOL,
    INT8,
    INT16,
    INT32,
    STRING,
    UUID,
    Array,
    Field,
    Message,
    Names,
    Struct,
)

# Kafka's "not requested" value for authorized_operations.
AUTHORIZED_OPERATIONS_OMITTED = -(2**31)
CLASSIC_MEMBER_TYPE, CONSUMER_MEMBER_TYPE = 0, 1  # MemberType (v1+): the protocol a member speaks
NO_ASSIGNMENT: Mapping[str, Any] = MappingProxyType({"topic_partitions": ()})


def _assignment() -> Struct:
    return Struct(
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


ConsumerGroupDescribeRequest = Message(
    "ConsumerGroupDescribeRequest",
    versions="0-1",
    flexible="0+",
    fields=[
        Field("group_ids", Array(STRING), names=Names.GROUP),
        Field("include_authorized_operations", BOOL),
    ],
)

ConsumerGroupDescribeResponse = Message(
    "ConsumerGroupDescribeResponse",
    versions="0-1",
    flexible="0+",
    fields=[
        Field("throttle_time_ms", INT32),
        Field(
            "groups",
            Array(
                Field("error_code", INT16),
                Field("error_message", STRING, nullable="0+", default=None),
                Field("group_id", STRING),
                Field("group_state", STRING),
                Field("group_epoch", INT32),
                Field("assignment_epoch", INT32),
                Field("assignor_name", STRING),
                Field(
                    "members",
                    Array(
                        Field("member_id", STRING),
                        Field("instance_id", STRING, nullable="0+", default=None),
                        Field("rack_id", STRING, nullable="0+", default=None),
                        Field("member_epoch", INT32),
                        Field("client_id", STRING),
                        Field("client_host", STRING),
                        Field("subscribed_topic_names", Array(STRING)),
                        Field("subscribed_topic_regex", STRING, nullable="0+", default=None),
                        Field("assignment", _assignment(), default=NO_ASSIGNMENT),
                        Field("target_assignment", _assignment(), default=NO_ASSIGNMENT),
                        Field("member_type", INT8, "1+", default=-1),
                    ),
                ),
                Field("authorized_operations", INT32, default=AUTHORIZED_OPERATIONS_OMITTED),
            ),
        ),
    ],
)

API = Api(69, "ConsumerGroupDescribe", ConsumerGroupDescribeRequest, ConsumerGroupDescribeResponse)
