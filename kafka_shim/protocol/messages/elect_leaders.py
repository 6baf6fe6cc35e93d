"""ElectLeaders (key 43, KIP-460): preferred or unclean leader election for partitions
(Kafka's ElectLeadersRequest.json / ElectLeadersResponse.json)."""

from enum import IntEnum

from kafka_shim.protocol.api import Api
from kafka_shim.protocol.schema import INT8, INT16, INT32, STRING, Array, Field, Message, Names


class ElectionType(IntEnum):
    PREFERRED = 0
    UNCLEAN = 1


ElectLeadersRequest = Message(
    "ElectLeadersRequest",
    versions="0-2",
    flexible="2+",
    fields=[
        Field("election_type", INT8, "1+"),
        # null: every partition of every topic
        Field(
            "topic_partitions",
            Array(
                Field("topic", STRING, names=Names.TOPIC),
                Field("partitions", Array(INT32), names=Names.PARTITION),
            ),
            nullable="0+",
        ),
        Field("timeout_ms", INT32, default=60000),
    ],
)

ElectLeadersResponse = Message(
    "ElectLeadersResponse",
    versions="0-2",
    flexible="2+",
    fields=[
        Field("throttle_time_ms", INT32),
        Field("error_code", INT16, "1+"),
        Field(
            "replica_election_results",
            Array(
                Field("topic", STRING),
                Field(
                    "partition_result",
                    Array(
                        Field("partition_id", INT32),
                        Field("error_code", INT16),
                        Field("error_message", STRING, nullable="0+", default=None),
                    ),
                ),
            ),
        ),
    ],
)

API = Api(43, "ElectLeaders", ElectLeadersRequest, ElectLeadersResponse)
