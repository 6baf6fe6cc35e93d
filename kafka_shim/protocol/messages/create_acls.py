"""CreateAcls (key 30): ACL bindings to add to the authorizer."""

from kafka_shim.protocol.api import Api
from kafka_shim.protocol.schema import INT8, INT16, INT32, STRING, Array, Field, Message

LITERAL = 3  # PatternType.LITERAL: the only pattern of v0, which does not carry one

CreateAclsRequest = Message(
    "CreateAclsRequest",
    versions="0-3",
    flexible="2+",
    fields=[
        Field(
            "creations",
            Array(
                Field("resource_type", INT8),
                Field("resource_name", STRING),
                Field("resource_pattern_type", INT8, "1+", default=LITERAL),
                Field("principal", STRING),
                Field("host", STRING),
                Field("operation", INT8),
                Field("permission_type", INT8),
            ),
        ),
    ],
)

CreateAclsResponse = Message(
    "CreateAclsResponse",
    versions="0-3",
    flexible="2+",
    fields=[
        Field("throttle_time_ms", INT32),
        Field(
            "results",
            Array(
                Field("error_code", INT16),
                Field("error_message", STRING, nullable="0+"),  # "" by default, as Kafka's JSON
            ),
        ),
    ],
)

API = Api(30, "CreateAcls", CreateAclsRequest, CreateAclsResponse)
