"""WriteTxnMarkers (key 27): the transaction coordinator (or the admin client's
abortTransaction) asks a partition leader to write COMMIT/ABORT markers.

Versions as Kafka 3.9 advertises them (0-1). Kafka 4.x dropped v0 and added v2 (each
marker's transaction version, KIP-890), which only brokers send each other: a 4.x
admin client negotiates v1 here.
"""

from kafka_shim.protocol.api import Api
from kafka_shim.protocol.schema import BOOL, INT16, INT32, INT64, STRING, Array, Field, Message

WriteTxnMarkersRequest = Message(
    "WriteTxnMarkersRequest",
    versions="0-1",
    flexible="1+",
    fields=[
        Field(
            "markers",
            Array(
                Field("producer_id", INT64),
                Field("producer_epoch", INT16),
                # false: ABORT, true: COMMIT.
                Field("transaction_result", BOOL),
                Field("topics", Array(Field("name", STRING), Field("partition_indexes", Array(INT32)))),
                Field("coordinator_epoch", INT32),
            ),
        ),
    ],
)

WriteTxnMarkersResponse = Message(
    "WriteTxnMarkersResponse",
    versions="0-1",
    flexible="1+",
    fields=[
        Field(
            "markers",
            Array(
                Field("producer_id", INT64),
                Field(
                    "topics",
                    Array(
                        Field("name", STRING),
                        Field(
                            "partitions", Array(Field("partition_index", INT32), Field("error_code", INT16))
                        ),
                    ),
                ),
            ),
        ),
    ],
)

API = Api(27, "WriteTxnMarkers", WriteTxnMarkersRequest, WriteTxnMarkersResponse)
