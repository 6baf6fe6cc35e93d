"""OffsetForLeaderEpoch (key 23): the end offset of a leader epoch, which consumers use to
detect log truncation after a leader change (KIP-320; Kafka's OffsetForLeaderEpochRequest.json
/ OffsetForLeaderEpochResponse.json)."""

from kafka_shim.protocol.api import Api
from kafka_shim.protocol.schema import INT16, INT32, INT64, STRING, Array, Field, Message, Names

# The epoch a request names when it knows none (Kafka's RecordBatch.NO_PARTITION_LEADER_EPOCH).
NO_LEADER_EPOCH = -1
UNDEFINED_EPOCH_OFFSET = -1
CONSUMER_REPLICA_ID = -1

OffsetForLeaderEpochRequest = Message(
    "OffsetForLeaderEpochRequest",
    versions="0-4",
    flexible="4+",
    fields=[
        Field("replica_id", INT32, "3+", default=-2),
        Field(
            "topics",
            Array(
                Field("topic", STRING, names=Names.TOPIC),
                Field(
                    "partitions",
                    Array(
                        Field("partition", INT32, names=Names.PARTITION),
                        Field("current_leader_epoch", INT32, "2+", default=NO_LEADER_EPOCH),
                        Field("leader_epoch", INT32),
                    ),
                ),
            ),
        ),
    ],
)

OffsetForLeaderEpochResponse = Message(
    "OffsetForLeaderEpochResponse",
    versions="0-4",
    flexible="4+",
    fields=[
        Field("throttle_time_ms", INT32, "2+"),
        Field(
            "topics",
            Array(
                Field("topic", STRING),
                Field(
                    "partitions",
                    Array(
                        Field("error_code", INT16),
                        Field("partition", INT32),
                        Field("leader_epoch", INT32, "1+", default=NO_LEADER_EPOCH),
                        Field("end_offset", INT64, default=UNDEFINED_EPOCH_OFFSET),
                    ),
                ),
            ),
        ),
    ],
)

API = Api(23, "OffsetForLeaderEpoch", OffsetForLeaderEpochRequest, OffsetForLeaderEpochResponse)
