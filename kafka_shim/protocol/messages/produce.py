"""Produce (key 0): record batches in, base offsets out.

Advertised from v0 (librdkafka turns compression off against a broker whose
Produce range starts above 0). v0-2 may carry magic 0/1 message sets, which the
handler up-converts; v3+ carry record batches v2 only.
v12 (KIP-890) is v11 on the wire: a transactional producer on transaction
version 2 sends it, and the broker adds the partition to its transaction.
v13 (KIP-516, Kafka 4.1) names each topic by its id instead of its name.
"""

from kafka_shim.protocol.api import Api
from kafka_shim.protocol.messages.metadata import ZERO_UUID
from kafka_shim.protocol.schema import (
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

ProduceRequest = Message(
    "ProduceRequest",
    versions="0-13",
    flexible="9+",
    fields=[
        Field("transactional_id", STRING, "3+", nullable="3+", default=None, names=Names.TRANSACTIONAL_ID),
        Field("acks", INT16),
        Field("timeout_ms", INT32),
        Field(
            "topic_data",
            Array(
                Field("name", STRING, "0-12", default="", names=Names.TOPIC),
                Field("topic_id", UUID, "13+", default=ZERO_UUID, names=Names.TOPIC),
                Field(
                    "partition_data",
                    Array(
                        Field("index", INT32, names=Names.PARTITION),
                        Field("records", RECORDS, nullable="0+"),
                    ),
                ),
            ),
        ),
    ],
)

ProduceResponse = Message(
    "ProduceResponse",
    versions="0-13",
    flexible="9+",
    fields=[
        Field(
            "responses",
            Array(
                Field("name", STRING, "0-12", default=""),
                Field("topic_id", UUID, "13+", default=ZERO_UUID),
                Field(
                    "partition_responses",
                    Array(
                        Field("index", INT32),
                        Field("error_code", INT16),
                        Field("base_offset", INT64),
                        Field("log_append_time_ms", INT64, "2+", default=-1),
                        Field("log_start_offset", INT64, "5+", default=-1),
                        Field(
                            "record_errors",
                            Array(
                                Field("batch_index", INT32),
                                Field("batch_index_error_message", STRING, nullable="8+", default=None),
                            ),
                            "8+",
                        ),
                        Field("error_message", STRING, "8+", nullable="8+", default=None),
                        Field(
                            "current_leader",
                            Struct(
                                [
                                    Field("leader_id", INT32, default=-1),
                                    Field("leader_epoch", INT32, default=-1),
                                ]
                            ),
                            "10+",
                            tag=0,
                        ),
                    ),
                ),
            ),
        ),
        Field("throttle_time_ms", INT32, "1+"),
        Field(
            "node_endpoints",
            Array(
                Field("node_id", INT32),
                Field("host", STRING),
                Field("port", INT32),
                Field("rack", STRING, nullable="0+", default=None),
            ),
            "10+",
            tag=0,
        ),
    ],
)

API = Api(0, "Produce", ProduceRequest, ProduceResponse)
