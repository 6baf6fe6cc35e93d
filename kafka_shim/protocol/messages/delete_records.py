"""DeleteRecords (key 21): move partitions' log start offsets forward
(Kafka's DeleteRecordsRequest.json / DeleteRecordsResponse.json)."""

from kafka_shim.protocol.api import Api
from kafka_shim.protocol.schema import INT16, INT32, INT64, STRING, Array, Field, Message, Names

DeleteRecordsRequest = Message(
    "DeleteRecordsRequest",
    versions="0-2",
    flexible="2+",
    fields=[
        Field(
            "topics",
            Array(
                Field("name", STRING, names=Names.TOPIC),
                Field(
                    "partitions",
                    Array(
                        Field("partition_index", INT32, names=Names.PARTITION),
                        # Delete records before this offset; -1: the high watermark.
                        Field("offset", INT64),
                    ),
                ),
            ),
        ),
        Field("timeout_ms", INT32),
    ],
)

DeleteRecordsResponse = Message(
    "DeleteRecordsResponse",
    versions="0-2",
    flexible="2+",
    fields=[
        Field("throttle_time_ms", INT32),
        Field(
            "topics",
            Array(
                Field("name", STRING),
                Field(
                    "partitions",
                    Array(
                        Field("partition_index", INT32),
                        Field("low_watermark", INT64),
                        Field("error_code", INT16),
                    ),
                ),
            ),
        ),
    ],
)

API = Api(21, "DeleteRecords", DeleteRecordsRequest, DeleteRecordsResponse)
