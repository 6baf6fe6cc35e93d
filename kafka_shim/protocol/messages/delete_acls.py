"""DeleteAcls (key 31): remove the ACL bindings matching each filter, and say which."""

from kafka_shim.protocol.api import Api
from kafka_shim.protocol.messages.create_acls import LITERAL
from kafka_shim.protocol.schema import INT8, INT16, INT32, STRING, Array, Field, Message

DeleteAclsRequest = Message(
    "DeleteAclsRequest",
    versions="0-3",
    flexible="2+",
    fields=[
        Field(
            "filters",
            Array(
                Field("resource_type_filter", INT8),
                Field("resource_name_filter", STRING, nullable="0+"),
                Field("pattern_type_filter", INT8, "1+", default=LITERAL),
                Field("principal_filter", STRING, nullable="0+"),
                Field("host_filter", STRING, nullable="0+"),
                Field("operation", INT8),
                Field("permission_type", INT8),
            ),
        ),
    ],
)

DeleteAclsResponse = Message(
    "DeleteAclsResponse",
    versions="0-3",
    flexible="2+",
    fields=[
        Field("throttle_time_ms", INT32),
        Field(
            "filter_results",
            Array(
                Field("error_code", INT16),
                Field("error_message", STRING, nullable="0+", default=None),
                Field(
                    "matching_acls",
                    Array(
                        Field("error_code", INT16),
                        Field("error_message", STRING, nullable="0+", default=None),
                        Field("resource_type", INT8),
                        Field("resource_name", STRING),
                        Field("pattern_type", INT8, "1+", default=LITERAL),
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

API = Api(31, "DeleteAcls", DeleteAclsRequest, DeleteAclsResponse)
