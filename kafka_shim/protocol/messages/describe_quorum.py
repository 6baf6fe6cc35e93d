"""DescribeQuorum (key 55): the KRaft metadata quorum's leader, epoch, high watermark, voters
and observers (`kafka-metadata-quorum.sh describe`); v2 adds the voters' endpoints (KIP-853)."""

from kafka_shim.protocol.api import Api
from kafka_shim.protocol.messages.metadata import ZERO_UUID
from kafka_shim.protocol.schema import INT16, INT32, INT64, STRING, UINT16, UUID, Array, Field, Message, Names

_PARTITIONS = Array(Field("partition_index", INT32, names=Names.PARTITION))

DescribeQuorumRequest = Message(
    "DescribeQuorumRequest",
    versions="0-2",
    flexible="0+",
    fields=[
        Field(
            "topics", Array(Field("topic_name", STRING, names=Names.TOPIC), Field("partitions", _PARTITIONS))
        )
    ],
)

_REPLICA_STATE = Array(
    Field("replica_id", INT32),
    Field("replica_directory_id", UUID, "2+", default=ZERO_UUID),
    Field("log_end_offset", INT64),
    Field("last_fetch_timestamp", INT64, "1+", default=-1),
    Field("last_caught_up_timestamp", INT64, "1+", default=-1),
)

DescribeQuorumResponse = Message(
    "DescribeQuorumResponse",
    versions="0-2",
    flexible="0+",
    fields=[
        Field("error_code", INT16),
        Field("error_message", STRING, "2+", nullable="2+", default=None),
        Field(
            "topics",
            Array(
                Field("topic_name", STRING),
                Field(
                    "partitions",
                    Array(
                        Field("partition_index", INT32),
                        Field("error_code", INT16),
                        Field("error_message", STRING, "2+", nullable="2+", default=None),
                        Field("leader_id", INT32),
                        Field("leader_epoch", INT32),
                        Field("high_watermark", INT64),
                        Field("current_voters", _REPLICA_STATE),
                        Field("observers", _REPLICA_STATE),
                    ),
                ),
            ),
        ),
        Field(
            "nodes",
            Array(
                Field("node_id", INT32),
                Field(
                    "listeners", Array(Field("name", STRING), Field("host", STRING), Field("port", UINT16))
                ),
            ),
            "2+",
        ),
    ],
)

API = Api(55, "DescribeQuorum", DescribeQuorumRequest, DescribeQuorumResponse)
