"""AlterConfigs (key 33): the legacy configuration update, which replaces a resource's whole
set of dynamic configs (Kafka's AlterConfigsRequest.json / AlterConfigsResponse.json)."""

from kafka_shim.protocol.api import Api
from kafka_shim.protocol.schema import (
    BOOL,
    INT8,
    INT16,
    INT32,
    STRING,
    Array,
    Field,
    Message,
    Names,
    Sensitive,
)

AlterConfigsRequest = Message(
    "AlterConfigsRequest",
    versions="0-2",
    flexible="2+",
    fields=[
        Field(
            "resources",
            Array(
                Field("resource_type", INT8),
                Field("resource_name", STRING, names=Names.CONFIG_RESOURCE),
                Field(
                    "configs",
                    Array(
                        Field("name", STRING),
                        Field("value", STRING, nullable="0+", sensitive=Sensitive.CONFIG_VALUE),
                    ),
                ),
            ),
        ),
        Field("validate_only", BOOL),
    ],
)

AlterConfigsResponse = Message(
    "AlterConfigsResponse",
    versions="0-2",
    flexible="2+",
    fields=[
        Field("throttle_time_ms", INT32),
        Field(
            "responses",
            Array(
                Field("error_code", INT16),
                Field("error_message", STRING, nullable="0+", default=None),
                Field("resource_type", INT8),
                Field("resource_name", STRING),
            ),
        ),
    ],
)

API = Api(33, "AlterConfigs", AlterConfigsRequest, AlterConfigsResponse)
