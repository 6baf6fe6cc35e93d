"""AlterPartitionReassignments (key 45, KIP-455): move partitions' replicas to other brokers,
or cancel a move; v1 (KIP-860, Kafka 4.1) can forbid changing the replica count (Kafka's
AlterPartitionReassignmentsRequest.json / ...Response.json)."""

from kafka_shim.protocol.api import Api
from kafka_shim.protocol.schema import BOOL, INT16, INT32, STRING, Array, Field, Message, Names

AlterPartitionReassignmentsRequest = Message(
    "AlterPartitionReassignmentsRequest",
    versions="0-1",
    flexible="0+",
    fields=[
        Field("timeout_ms", INT32, default=60000),
        # v1 (KIP-860): false refuses a move that changes a partition's replica count.
        Field("allow_replication_factor_change", BOOL, "1+", default=True),
        Field(
            "topics",
            Array(
                Field("name", STRING, names=Names.TOPIC),
                Field(
                    "partitions",
                    Array(
                        Field("partition_index", INT32, names=Names.PARTITION),
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
    versions="0-1",
    flexible="0+",
    fields=[
        Field("throttle_time_ms", INT32),
        Field("allow_replication_factor_change", BOOL, "1+", default=True),
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
