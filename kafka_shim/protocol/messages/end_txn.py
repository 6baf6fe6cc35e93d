"""EndTxn (key 26): commit or abort the producer's transaction.

v5 (KIP-890 part 2, transaction version 2) bumps the producer epoch with every
transaction and answers the producer id and epoch the next transaction uses.
"""

from kafka_shim.protocol.api import Api
from kafka_shim.protocol.schema import BOOL, INT16, INT32, INT64, STRING, Field, Message, Names

EndTxnRequest = Message(
    "EndTxnRequest",
    versions="0-5",
    flexible="3+",
    fields=[
        Field("transactional_id", STRING, names=Names.TRANSACTIONAL_ID),
        Field("producer_id", INT64),
        Field("producer_epoch", INT16),
        Field("committed", BOOL),
    ],
)

EndTxnResponse = Message(
    "EndTxnResponse",
    versions="0-5",
    flexible="3+",
    fields=[
        Field("throttle_time_ms", INT32),
        Field("error_code", INT16),
        Field("producer_id", INT64, "5+", default=-1),
        Field("producer_epoch", INT16, "5+", default=-1),
    ],
)

API = Api(26, "EndTxn", EndTxnRequest, EndTxnResponse)
