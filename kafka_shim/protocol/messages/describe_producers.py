"""DescribeProducers (key 61, KIP-664): the producers a partition knows, with their
open transactions (Kafka's DescribeProducersRequest.json / DescribeProducersResponse.json)."""

from kafka_shim.protocol.api import Api
from kafka_shim.protocol.schema import INT16, INT32, INT64, STRING, Array, Field, Message, Names

DescribeProducersRequest = Message(
    "DescribeProducersRequest",
    versions="0",
    flexible="0+",
    fields=[
        Field(
            "topics",
            Array(
                Field("name", STRING, names=Names.TOPIC),
                Field("partition_indexes", Array(INT32), names=Names.PARTITION),
            ),
        ),
    ],
)

DescribeProducersResponse = Message(
    "DescribeProducersResponse",
    versions="0",
    flexible="0+",
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
                        Field("error_code", INT16),
                        Field("error_message", STRING, nullable="0+", default=None),
                        Field(
                            "active_producers",
                            Array(
                                Field("producer_id", INT64),
                                Field("producer_epoch", INT32),
                                Field("last_sequence", INT32, default=-1),
                                Field("last_timestamp", INT64, default=-1),
                                Field("coordinator_epoch", INT32),
                                Field("current_txn_start_offset", INT64, default=-1),
                            ),
                        ),
                    ),
                ),
            ),
        ),
    ],
)

API = Api(61, "DescribeProducers", DescribeProducersRequest, DescribeProducersResponse)
