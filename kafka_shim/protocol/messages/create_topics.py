"""CreateTopics (key 19). v0-1 (deprecated in Kafka 3.x, removed in 4.0) are served as
Kafka 3.9 serves them: v0 without validate_only and error messages."""

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
    Sensitive,
)

CreateTopicsRequest = Message(
    "CreateTopicsRequest",
    versions="0-7",
    flexible="5+",
    fields=[
        Field(
            "topics",
            Array(
                Field("name", STRING, names=Names.TOPIC),
                Field("num_partitions", INT32),
                Field("replication_factor", INT16),
                Field(
                    "assignments",
                    Array(
                        Field("partition_index", INT32, names=Names.PARTITION),
                        Field("broker_ids", Array(INT32)),
                    ),
                ),
                Field(
                    "configs",
                    Array(
                        Field("name", STRING),
                        Field("value", STRING, nullable="0+", sensitive=Sensitive.CONFIG_VALUE),
                    ),
                ),
            ),
        ),
        Field("timeout_ms", INT32, default=60000),
        Field("validate_only", BOOL, "1+"),
    ],
)

CreateTopicsResponse = Message(
    "CreateTopicsResponse",
    versions="0-7",
    flexible="5+",
    fields=[
        Field("throttle_time_ms", INT32, "2+"),
        Field(
            "topics",
            Array(
                Field("name", STRING),
                Field("topic_id", UUID, "7+", default=ZERO_UUID),
                Field("error_code", INT16),
                Field("error_message", STRING, "1+", nullable="0+"),
                Field("topic_config_error_code", INT16, "5+", tag=0),
                Field("num_partitions", INT32, "5+", default=-1),
                Field("replication_factor", INT16, "5+", default=-1),
                Field(
                    "configs",
                    Array(
                        Field("name", STRING),
                        Field("value", STRING, nullable="0+"),
                        Field("read_only", BOOL),
                        Field("config_source", INT8, default=-1),
                        Field("is_sensitive", BOOL),
                    ),
                    "5+",
                    nullable="5+",
                ),
            ),
        ),
    ],
)

API = Api(19, "CreateTopics", CreateTopicsRequest, CreateTopicsResponse)
