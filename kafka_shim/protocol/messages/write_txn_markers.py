"""WriteTxnMarkers (key 27): the transaction coordinator (or the admin client's
abortTransaction) asks a partition leader to write COMMIT/ABORT markers.

v0-1 as Kafka 3.9 advertises them; Kafka 4.0 dropped v0 (the release table cuts it) and
4.2 added v2 (each marker's transaction version, KIP-1228).
"""

from kafka_shim.protocol.api import Api
from kafka_shim.protocol.schema import BOOL, INT8, INT16, INT32, INT64, STRING, Array, Field, Message, Names

WriteTxnMarkersRequest = Message(
    "WriteTxnMarkersRequest",
    versions="0-2",
    flexible="1+",
    fields=[
        Field(
            "markers",
            Array(
                Field("producer_id", INT64),
                Field("producer_epoch", INT16),
                # false: ABORT, true: COMMIT.
                Field("transaction_result", BOOL),
                Field(
                    "topics",
                    Array(
                        Field("name", STRING, names=Names.TOPIC),
                        Field("partition_indexes", Array(INT32), names=Names.PARTITION),
                    ),
                ),
                Field("coordinator_epoch", INT32),
                # v2 (KIP-1228): the marker's transaction version; 2 asks the partition's
                # strict epoch check (the marker's epoch must be newer than the producer's).
                Field("transaction_version", INT8, "2+", default=0),
            ),
        ),
    ],
)

WriteTxnMarkersResponse = Message(
    "WriteTxnMarkersResponse",
    versions="0-2",
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
