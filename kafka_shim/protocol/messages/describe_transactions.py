"""DescribeTransactions (key 65): state, producer and partitions of transactional ids."""

from kafka_shim.protocol.api import Api
from kafka_shim.protocol.schema import INT16, INT32, INT64, STRING, Array, Field, Message, Names

DescribeTransactionsRequest = Message(
    "DescribeTransactionsRequest",
    versions="0",
    flexible="0+",
    fields=[Field("transactional_ids", Array(STRING), names=Names.TRANSACTIONAL_ID)],
)

DescribeTransactionsResponse = Message(
    "DescribeTransactionsResponse",
    versions="0",
    flexible="0+",
    fields=[
        Field("throttle_time_ms", INT32),
        Field(
            "transaction_states",
            Array(
                Field("error_code", INT16),
                Field("transactional_id", STRING),
                Field("transaction_state", STRING),
                Field("transaction_timeout_ms", INT32),
                Field("transaction_start_time_ms", INT64),
                Field("producer_id", INT64),
                Field("producer_epoch", INT16),
                Field("topics", Array(Field("topic", STRING), Field("partitions", Array(INT32)))),
            ),
        ),
    ],
)

API = Api(65, "DescribeTransactions", DescribeTransactionsRequest, DescribeTransactionsResponse)
