"""AddOffsetsToTxn (key 25): a consumer group's offsets join the producer's transaction."""

from kafka_shim.protocol.api import Api
from kafka_shim.protocol.schema import INT16, INT32, INT64, STRING, Field, Message, Names

AddOffsetsToTxnRequest = Message(
    "AddOffsetsToTxnRequest",
    versions="0-4",
    flexible="3+",
    fields=[
        Field("transactional_id", STRING, names=Names.TRANSACTIONAL_ID),
        Field("producer_id", INT64),
        Field("producer_epoch", INT16),
        Field("group_id", STRING, names=Names.GROUP),
    ],
)

AddOffsetsToTxnResponse = Message(
    "AddOffsetsToTxnResponse",
    versions="0-4",
    flexible="3+",
    fields=[Field("throttle_time_ms", INT32), Field("error_code", INT16)],
)

API = Api(25, "AddOffsetsToTxn", AddOffsetsToTxnRequest, AddOffsetsToTxnResponse)
