"""InitProducerId (key 22): producer ids and epochs for idempotent producers.

Ranges as Kafka 3.8 advertises them (v5 differs from v4 only in error codes
a transactional producer may see).
"""

from kafka_shim.protocol.api import Api
from kafka_shim.protocol.schema import INT16, INT32, INT64, STRING, Field, Message, Names

InitProducerIdRequest = Message(
    "InitProducerIdRequest",
    versions="0-5",
    flexible="2+",
    fields=[
        Field("transactional_id", STRING, nullable="0+", default=None, names=Names.TRANSACTIONAL_ID),
        Field("transaction_timeout_ms", INT32),
        Field("producer_id", INT64, "3+", default=-1),
        Field("producer_epoch", INT16, "3+", default=-1),
    ],
)

InitProducerIdResponse = Message(
    "InitProducerIdResponse",
    versions="0-5",
    flexible="2+",
    fields=[
        Field("throttle_time_ms", INT32),
        Field("error_code", INT16),
        Field("producer_id", INT64, default=-1),
        Field("producer_epoch", INT16),
    ],
)

API = Api(22, "InitProducerId", InitProducerIdRequest, InitProducerIdResponse)
