"""AlterPartitionReassignments (key 45, KIP-455): move partitions' replicas to other brokers,
or cancel a move (Kafka's AlterPartitionReassignmentsRequest.json / ...Response.json)."""

from kafka_shim.protocol.api import Api
from kafka_shim.protocol.schema import INT16, INT32, STRING, Array, Field, Message

AlterPartitionReassignmentsRequest = Message(
    "AlterPartitionReassignmentsRequest",
    versions="0",
    flexible="0+",
    fields=[
        Field("timeout_ms", INT32, default=60000),
        Field(
            "topics",
            Array(
                Field("name", STRING),
                Field(
                    "partitions",
                    Array(
                        Field("partition_index", INT32),
                        # null: cancel the partition's pending reassignment
                        Field("replicas", Array(INT32), nullable="0+", default=None),
                    ),
                ),
            ),
        ),
    ],
)

AlterPartitionReassignmentsResponse = Message(
    "AlterPartitionReassignmentsResponse",
    versions="0",
    flexible="0+",
    fields=[
        Field("throttle_time_ms", INT32),
        Field("error_code", INT16),
        Field("error_message", STRING, nullable="0+", default=None),
        Field(
            "responses",
            Array(
                Field("name", STRING),
                Field(
                    "partitions",
                    Array(
                        Field("partition_index", INT32),
                        Field("error_code", INT16),
                        Field("error_message", STRING, nullable="0+", default=None),
                    ),
                ),
            ),
        ),
    ],
)

API = Api(
    45, "AlterPartitionReassignments", AlterPartitionReassignmentsRequest, AlterPartitionReassignmentsResponse
)
