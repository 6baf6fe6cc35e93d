"""DescribeTopicPartitions (key 75, KIP-966): Metadata's topic description paged by a
cursor, as the Java admin client's describeTopics asks for it (Kafka's
DescribeTopicPartitionsRequest.json / DescribeTopicPartitionsResponse.json)."""

from kafka_shim.protocol.api import Api
from kafka_shim.protocol.messages.metadata import AUTHORIZED_OPERATIONS_OMITTED, ZERO_UUID
from kafka_shim.protocol.schema import BOOL, INT16, INT32, STRING, UUID, Array, Field, Message, Names, Struct


def _cursor() -> Struct:
    return Struct(
        [
            Field("topic_name", STRING, names=Names.TOPIC),
            Field("partition_index", INT32, names=Names.PARTITION),
        ]
    )


DescribeTopicPartitionsRequest = Message(
    "DescribeTopicPartitionsRequest",
    versions="0",
    flexible="0+",
    fields=[
        Field("topics", Array(Field("name", STRING, names=Names.TOPIC))),
        Field("response_partition_limit", INT32, default=2000),
        Field("cursor", _cursor(), nullable="0+", default=None),
    ],
)

DescribeTopicPartitionsResponse = Message(
    "DescribeTopicPartitionsResponse",
    versions="0",
    flexible="0+",
    fields=[
        Field("throttle_time_ms", INT32),
        Field(
            "topics",
            Array(
                Field("error_code", INT16),
                Field("name", STRING, nullable="0+"),
                Field("topic_id", UUID, default=ZERO_UUID),
                Field("is_internal", BOOL),
                Field(
                    "partitions",
                    Array(
                        Field("error_code", INT16),
                        Field("partition_index", INT32),
                        Field("leader_id", INT32),
                        Field("leader_epoch", INT32, default=-1),
                        Field("replica_nodes", Array(INT32)),
                        Field("isr_nodes", Array(INT32)),
                        Field("eligible_leader_replicas", Array(INT32), nullable="0+", default=None),
                        Field("last_known_elr", Array(INT32), nullable="0+", default=None),
                        Field("offline_replicas", Array(INT32)),
                    ),
                ),
                Field("topic_authorized_operations", INT32, default=AUTHORIZED_OPERATIONS_OMITTED),
            ),
        ),
        Field("next_cursor", _cursor(), nullable="0+", default=None),
    ],
)

API = Api(75, "DescribeTopicPartitions", DescribeTopicPartitionsRequest, DescribeTopicPartitionsResponse)
