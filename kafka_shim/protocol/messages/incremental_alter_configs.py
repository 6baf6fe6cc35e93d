"""IncrementalAlterConfigs (key 44): set, delete, append to or subtract from
configs of resources (Kafka's IncrementalAlterConfigsRequest.json /
IncrementalAlterConfigsResponse.json)."""

from enum import IntEnum

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


class AlterConfigOp(IntEnum):
    SET = 0
    DELETE = 1
    APPEND = 2
    SUBTRACT = 3


IncrementalAlterConfigsRequest = Message(
    "IncrementalAlterConfigsRequest",
    versions="0-1",
    flexible="1+",
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
                        Field("config_operation", INT8),
                        Field("value", STRING, nullable="0+", sensitive=Sensitive.CONFIG_VALUE),
                    ),
                ),
            ),
        ),
        Field("validate_only", BOOL),
    ],
)

IncrementalAlterConfigsResponse = Message(
    "IncrementalAlterConfigsResponse",
    versions="0-1",
    flexible="1+",
    fields=[
        Field("throttle_time_ms", INT32),
        Field(
            "responses",
            Array(
                Field("error_code", INT16),
                Field("error_message", STRING, nullable="0+"),
                Field("resource_type", INT8),
                Field("resource_name", STRING),
            ),
        ),
    ],
)

API = Api(44, "IncrementalAlterConfigs", IncrementalAlterConfigsRequest, IncrementalAlterConfigsResponse)
