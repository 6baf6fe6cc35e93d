"""AddPartitionsToTxn (key 24): partitions joining a producer's ongoing transaction.

v0-3 are a client's single transaction; v4+ batch several transactions (brokers
verifying Produce send them, `verify_only`), with a top-level error code.
"""

from kafka_shim.protocol.api import Api
from kafka_shim.protocol.schema import BOOL, INT16, INT32, INT64, STRING, Array, Field, Message, Names

_TOPICS = Array(
    Field("name", STRING, names=Names.TOPIC), Field("partitions", Array(INT32), names=Names.PARTITION)
)

_PARTITION_RESULTS = Array(
    Field("name", STRING),
    Field(
        "results_by_partition", Array(Field("partition_index", INT32), Field("partition_error_code", INT16))
    ),
)

AddPartitionsToTxnRequest = Message(
    "AddPartitionsToTxnRequest",
    versions="0-5",
    flexible="3+",
    fields=[
        Field(
            "transactions",
            Array(
                Field("transactional_id", STRING, "4+", names=Names.TRANSACTIONAL_ID),
                Field("producer_id", INT64, "4+"),
                Field("producer_epoch", INT16, "4+"),
                Field("verify_only", BOOL, "4+"),
                Field("topics", _TOPICS, "4+"),
            ),
            "4+",
        ),
        Field("v3_and_below_transactional_id", STRING, "0-3", names=Names.TRANSACTIONAL_ID),
        Field("v3_and_below_producer_id", INT64, "0-3"),
        Field("v3_and_below_producer_epoch", INT16, "0-3"),
        Field("v3_and_below_topics", _TOPICS, "0-3"),
    ],
)

AddPartitionsToTxnResponse = Message(
    "AddPartitionsToTxnResponse",
    versions="0-5",
    flexible="3+",
    fields=[
        Field("throttle_time_ms", INT32),
        Field("error_code", INT16, "4+"),
        Field(
            "results_by_transaction",
            Array(Field("transactional_id", STRING, "4+"), Field("topic_results", _PARTITION_RESULTS, "4+")),
            "4+",
        ),
        Field("results_by_topic_v3_and_below", _PARTITION_RESULTS, "0-3"),
    ],
)

API = Api(24, "AddPartitionsToTxn", AddPartitionsToTxnRequest, AddPartitionsToTxnResponse)
