"""Fetch (key 1): slices of stored record batches, with long polling.

v0-3 carry magic 0/1 message sets (v0-1 magic 0, v2-3 magic 1): the handler
down-converts the stored v2 batches for them, as Kafka 3.x does. v13+ name topics
by id instead of by name; v17 (Kafka 3.9) and v18 (Kafka 4.1)
only add followers' tagged fields; the response is the same.
"""

from kafka_shim.protocol.api import Api
from kafka_shim.protocol.messages.metadata import ZERO_UUID
from kafka_shim.protocol.schema import (
    INT8,
    INT16,
    INT32,
    INT64,
    RECORDS,
    STRING,
    UUID,
    Array,
    Field,
    Message,
    Names,
    Struct,
)
from kafka_shim.protocol.settings import LONG_MAX

FetchRequest = Message(
    "FetchRequest",
    versions="0-18",
    flexible="12+",
    fields=[
        Field("cluster_id", STRING, "12+", nullable="12+", tag=0, default=None),
        Field("replica_id", INT32, "0-14", default=-1),
        Field(
            "replica_state",
            Struct(
                [
                    Field("replica_id", INT32, default=-1),
                    Field("replica_epoch", INT64, default=-1),
                ]
            ),
            "15+",
            tag=1,
        ),
        Field("max_wait_ms", INT32),
        Field("min_bytes", INT32),
        Field("max_bytes", INT32, "3+", default=0x7FFFFFFF),
        Field("isolation_level", INT8, "4+"),
        Field("session_id", INT32, "7+"),
        Field("session_epoch", INT32, "7+", default=-1),
        Field(
            "topics",
            Array(
                Field("topic", STRING, "0-12", names=Names.TOPIC),
                Field("topic_id", UUID, "13+", default=ZERO_UUID, names=Names.TOPIC),
                Field(
                    "partitions",
                    Array(
                        Field("partition", INT32, names=Names.PARTITION),
                        Field("current_leader_epoch", INT32, "9+", default=-1),
                        Field("fetch_offset", INT64),
                        Field("last_fetched_epoch", INT32, "12+", default=-1),
                        Field("log_start_offset", INT64, "5+", default=-1),
                        Field("partition_max_bytes", INT32),
                        # KIP-853 (v17): a follower's directory; consumers leave it out.
                        Field("replica_directory_id", UUID, "17+", tag=0, default=ZERO_UUID),
                        # KIP-1166 (v18): the high watermark a follower knows; consumers leave
                        # it out (its default says "not supported").
                        Field("high_watermark", INT64, "18+", tag=1, default=LONG_MAX),
                    ),
                ),
            ),
        ),
        Field(
            "forgotten_topics_data",
            Array(
                Field("topic", STRING, "7-12", names=Names.TOPIC),
                Field("topic_id", UUID, "13+", default=ZERO_UUID, names=Names.TOPIC),
                Field("partitions", Array(INT32), names=Names.PARTITION),
            ),
            "7+",
        ),
        Field("rack_id", STRING, "11+"),
    ],
)

_EPOCH_END_OFFSET = Struct([Field("epoch", INT32, default=-1), Field("end_offset", INT64, default=-1)])
_LEADER_ID_AND_EPOCH = Struct(
    [Field("leader_id", INT32, default=-1), Field("leader_epoch", INT32, default=-1)]
)
_SNAPSHOT_ID = Struct([Field("end_offset", INT64, default=-1), Field("epoch", INT32, default=-1)])

FetchResponse = Message(
    "FetchResponse",
    versions="0-18",
    flexible="12+",
    fields=[
        Field("throttle_time_ms", INT32, "1+"),
        Field("error_code", INT16, "7+"),
        Field("session_id", INT32, "7+"),
        Field(
            "responses",
            Array(
                Field("topic", STRING, "0-12"),
                Field("topic_id", UUID, "13+", default=ZERO_UUID),
                Field(
                    "partitions",
                    Array(
                        Field("partition_index", INT32),
                        Field("error_code", INT16),
                        Field("high_watermark", INT64),
                        Field("last_stable_offset", INT64, "4+", default=-1),
                        Field("log_start_offset", INT64, "5+", default=-1),
                        Field("diverging_epoch", _EPOCH_END_OFFSET, "12+", tag=0),
                        Field("current_leader", _LEADER_ID_AND_EPOCH, "12+", tag=1),
                        Field("snapshot_id", _SNAPSHOT_ID, "12+", tag=2),
                        Field(
                            "aborted_transactions",
                            Array(Field("producer_id", INT64), Field("first_offset", INT64)),
                            "4+",
                            nullable="4+",
                        ),
                        Field("preferred_read_replica", INT32, "11+", default=-1),
                        # Present-but-empty (b"") when there is nothing to
                        # return: some clients treat null as an error.
                        Field("records", RECORDS, nullable="0+", default=b""),
                    ),
                ),
            ),
        ),
        Field(
            "node_endpoints",
            Array(
                Field("node_id", INT32),
                Field("host", STRING),
                Field("port", INT32),
                Field("rack", STRING, nullable="0+", default=None),
            ),
            "16+",
            tag=0,
        ),
    ],
)

API = Api(1, "Fetch", FetchRequest, FetchResponse)
