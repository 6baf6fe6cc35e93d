"""ListTransactions (key 66): the transactions this coordinator holds, filtered
by state and producer id, (v1+, KIP-994) by how long they have run and (v2+, KIP-1152) by
a transactional id pattern."""

from kafka_shim.protocol.api import Api
from kafka_shim.protocol.schema import INT16, INT32, INT64, STRING, Array, Field, Message

ListTransactionsRequest = Message(
    "ListTransactionsRequest",
    versions="0-2",
    flexible="0+",
    fields=[
        Field("state_filters", Array(STRING)),
        Field("producer_id_filters", Array(INT64)),
        Field("duration_filter", INT64, "1+", default=-1),
        # v2 (KIP-1152): a Java regular expression the whole transactional id must match.
        Field("transactional_id_pattern", STRING, "2+", nullable="2+", default=None),
    ],
)

ListTransactionsResponse = Message(
    "ListTransactionsResponse",
    versions="0-2",
    flexible="0+",
    fields=[
        Field("throttle_time_ms", INT32),
        Field("error_code", INT16),
        Field("unknown_state_filters", Array(STRING)),
        Field(
            "transaction_states",
            Array(
                Field("transactional_id", STRING),
                Field("producer_id", INT64),
                Field("transaction_state", STRING),
            ),
        ),
    ],
)

API = Api(66, "ListTransactions", ListTransactionsRequest, ListTransactionsResponse)
