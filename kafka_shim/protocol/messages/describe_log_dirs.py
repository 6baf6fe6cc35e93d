"""DescribeLogDirs (key 35): the broker's log directories with the size of each partition's
log in them (Kafka's DescribeLogDirsRequest.json / DescribeLogDirsResponse.json)."""

from kafka_shim.protocol.api import Api
from kafka_shim.protocol.schema import BOOL, INT16, INT32, INT64, STRING, Array, Field, Message, Names

DescribeLogDirsRequest = Message(
    "DescribeLogDirsRequest",
    versions="0-4",
    flexible="2+",
    fields=[
        # null: every partition
        Field(
            "topics",
            Array(
                Field("topic", STRING, names=Names.TOPIC),
                Field("partitions", Array(INT32), names=Names.PARTITION),
            ),
            nullable="0+",
        ),
    ],
)

DescribeLogDirsResponse = Message(
    "DescribeLogDirsResponse",
    versions="0-4",
    flexible="2+",
    fields=[
        Field("throttle_time_ms", INT32),
        Field("error_code", INT16, "3+"),
        Field(
            "results",
            Array(
                Field("error_code", INT16),
                Field("log_dir", STRING),
                Field(
                    "topics",
                    Array(
                        Field("name", STRING),
                        Field(
                            "partitions",
                            Array(
                                Field("partition_index", INT32),
                                Field("partition_size", INT64),
                                Field("offset_lag", INT64),
                                Field("is_future_key", BOOL),
                            ),
                        ),
                    ),
                ),
                Field("total_bytes", INT64, "4+", default=-1),
                Field("usable_bytes", INT64, "4+", default=-1),
            ),
        ),
    ],
)

API = Api(35, "DescribeLogDirs", DescribeLogDirsRequest, DescribeLogDirsResponse)
