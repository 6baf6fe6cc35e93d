"""TxnOffsetCommit (key 28): a transactional producer commits a group's offsets
inside its transaction; they become visible when the transaction commits.

v2 adds the committed leader epoch; v3 (flexible) adds the member id, group
instance id and generation, so a zombie member of an older generation is fenced;
v4 only lets the broker answer TRANSACTION_ABORTABLE (KIP-890); v5 is v4 on the wire: a
producer on transaction version 2 sends it, and the broker adds the group's offsets
partition to the transaction (KIP-890 part 2). Kafka 4's range.
"""

from kafka_shim.protocol.api import Api
from kafka_shim.protocol.schema import INT16, INT32, INT64, STRING, Array, Field, Message, Names

TxnOffsetCommitRequest = Message(
    "TxnOffsetCommitRequest",
    versions="0-5",
    flexible="3+",
    fields=[
        Field("transactional_id", STRING, names=Names.TRANSACTIONAL_ID),
        Field("group_id", STRING, names=Names.GROUP),
        Field("producer_id", INT64),
        Field("producer_epoch", INT16),
        Field("generation_id", INT32, "3+", default=-1),
        Field("member_id", STRING, "3+"),
        Field("group_instance_id", STRING, "3+", nullable="3+", default=None),
        Field(
            "topics",
            Array(
                Field("name", STRING, names=Names.TOPIC),
                Field(
                    "partitions",
                    Array(
                        Field("partition_index", INT32, names=Names.PARTITION),
                        Field("committed_offset", INT64),
                        Field("committed_leader_epoch", INT32, "2+", default=-1),
                        Field("committed_metadata", STRING, nullable="0+"),
                    ),
                ),
            ),
        ),
    ],
)

TxnOffsetCommitResponse = Message(
    "TxnOffsetCommitResponse",
    versions="0-5",
    flexible="3+",
    fields=[
        Field("throttle_time_ms", INT32),
        Field(
            "topics",
            Array(
                Field("name", STRING),
                Field("partitions", Array(Field("partition_index", INT32), Field("error_code", INT16))),
            ),
        ),
    ],
)

API = Api(28, "TxnOffsetCommit", TxnOffsetCommitRequest, TxnOffsetCommitResponse)
