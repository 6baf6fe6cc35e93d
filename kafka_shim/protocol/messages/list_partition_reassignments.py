"""ListPartitionReassignments (key 46, KIP-455): the partition reassignments in progress
(Kafka's ListPartitionReassignmentsRequest.json / ListPartitionReassignmentsResponse.json)."""

from kafka_shim.protocol.api import Api
from kafka_shim.protocol.schema import INT16, INT32, STRING, Array, Field, Message, Names

ListPartitionReassignmentsRequest = Message(
    "ListPartitionReassignmentsRequest",
    versions="0",
    flexible="0+",
    fields=[
        Field("timeout_ms", INT32, default=60000),
        # null: every reassignment in progress
        Field(
            "topics",
            Array(
                Field("name", STRING, names=Names.TOPIC),
                Field("partition_indexes", Array(INT32), names=Names.PARTITION),
            ),
            nullable="0+",
            default=None,
        ),
    ],
)

ListPartitionReassignmentsResponse = Message(
    "ListPartitionReassignmentsResponse",
    versions="0",
    flexible="0+",
    fields=[
        Field("throttle_time_ms", INT32),
        Field("error_code", INT16),
        Field("error_message", STRING, nullable="0+", default=None),
        Field(
            "topics",
            Array(
                Field("name", STRING),
                Field(
                    "partitions",
                    Array(
                        Field("partition_index", INT32),
                        Field("replicas", Array(INT32)),
                        Field("adding_replicas", Array(INT32)),
                        Field("removing_replicas", Array(INT32)),
                    ),
                ),
            ),
        ),
    ],
)

API = Api(
    46, "ListPartitionReassignments", ListPartitionReassignmentsRequest, ListPartitionReassignmentsResponse
)
