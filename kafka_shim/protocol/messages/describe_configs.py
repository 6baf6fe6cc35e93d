"""DescribeConfigs (key 32): topic and broker configuration."""

from enum import IntEnum

from kafka_shim.protocol.api import Api
from kafka_shim.protocol.schema import BOOL, INT8, INT16, INT32, STRING, Array, Field, Message, Names


class ResourceType(IntEnum):
    TOPIC = 2
    BROKER = 4
    BROKER_LOGGER = 8
    GROUP = 32  # Kafka 4's group configs (KIP-848, KIP-932)


class ConfigSource(IntEnum):
    UNKNOWN = 0
    DYNAMIC_TOPIC_CONFIG = 1
    DYNAMIC_BROKER_CONFIG = 2
    DYNAMIC_DEFAULT_BROKER_CONFIG = 3
    STATIC_BROKER_CONFIG = 4
    DEFAULT_CONFIG = 5
    DYNAMIC_BROKER_LOGGER_CONFIG = 6
    DYNAMIC_GROUP_CONFIG = 8


DescribeConfigsRequest = Message(
    "DescribeConfigsRequest",
    versions="0-4",
    flexible="4+",
    fields=[
        Field(
            "resources",
            Array(
                Field("resource_type", INT8),
                Field("resource_name", STRING, names=Names.CONFIG_RESOURCE),
                # null: every config of the resource
                Field("configuration_keys", Array(STRING), nullable="0+"),
            ),
        ),
        Field("include_synonyms", BOOL, "1+"),
        Field("include_documentation", BOOL, "3+"),
    ],
)

DescribeConfigsResponse = Message(
    "DescribeConfigsResponse",
    versions="0-4",
    flexible="4+",
    fields=[
        Field("throttle_time_ms", INT32),
        Field(
            "results",
            Array(
                Field("error_code", INT16),
                Field("error_message", STRING, nullable="0+"),
                Field("resource_type", INT8),
                Field("resource_name", STRING),
                Field(
                    "configs",
                    Array(
                        Field("name", STRING),
                        Field("value", STRING, nullable="0+"),
                        Field("read_only", BOOL),
                        Field("is_default", BOOL, "0"),
                        Field("config_source", INT8, "1+", default=-1),
                        Field("is_sensitive", BOOL),
                        Field(
                            "synonyms",
                            Array(
                                Field("name", STRING),
                                Field("value", STRING, nullable="0+"),
                                Field("source", INT8),
                            ),
                            "1+",
                        ),
                        Field("config_type", INT8, "3+"),
                        Field("documentation", STRING, "3+", nullable="0+"),
                    ),
                ),
            ),
        ),
    ],
)

API = Api(32, "DescribeConfigs", DescribeConfigsRequest, DescribeConfigsResponse)
