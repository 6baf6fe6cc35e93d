"""DescribeAcls (key 29): the ACL bindings matching one filter, grouped by resource pattern."""

from kafka_shim.protocol.api import Api
from kafka_shim.protocol.messages.create_acls import LITERAL
from kafka_shim.protocol.schema import INT8, INT16, INT32, STRING, Array, Field, Message

DescribeAclsRequest = Message(
    "DescribeAclsRequest",
    versions="0-3",
    flexible="2+",
    fields=[
        Field("resource_type_filter", INT8),
        Field("resource_name_filter", STRING, nullable="0+"),
        Field("pattern_type_filter", INT8, "1+", default=LITERAL),
        Field("principal_filter", STRING, nullable="0+"),
        Field("host_filter", STRING, nullable="0+"),
        Field("operation", INT8),
        Field("permission_type", INT8),
    ],
)

DescribeAclsResponse = Message(
    "DescribeAclsResponse",
    versions="0-3",
    flexible="2+",
    fields=[
        Field("throttle_time_ms", INT32),
        Field("error_code", INT16),
        Field("error_message", STRING, nullable="0+"),  # "" by default, as Kafka's JSON
        Field(
            "resources",
            Array(
                Field("resource_type", INT8),
                Field("resource_name", STRING),
                Field("pattern_type", INT8, "1+", default=LITERAL),
                Field(
                    "acls",
                    Array(
                        Field("principal", STRING),
                        Field("host", STRING),
                        Field("operation", INT8),
                        Field("permission_type", INT8),
                    ),
                ),
            ),
        ),
    ],
)

API = Api(29, "DescribeAcls", DescribeAclsRequest, DescribeAclsResponse)
