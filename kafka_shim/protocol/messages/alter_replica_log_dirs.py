"""AlterReplicaLogDirs (key 34, KIP-113): move partitions' logs to another of the broker's log
directories (Kafka's AlterReplicaLogDirsRequest.json / AlterReplicaLogDirsResponse.json)."""

from kafka_shim.protocol.api import Api
from kafka_shim.protocol.schema import INT16, INT32, STRING, Array, Field, Message, Names

AlterReplicaLogDirsRequest = Message(
    "AlterReplicaLogDirsRequest",
    versions="0-2",
    flexible="2+",
    fields=[
        Field(
            "dirs",
            Array(
                Field("path", STRING),
                Field(
                    "topics",
                    Array(
                        Field("name", STRING, names=Names.TOPIC),
                        Field("partitions", Array(INT32), names=Names.PARTITION),
                    ),
                ),
            ),
        ),
    ],
)

AlterReplicaLogDirsResponse = Message(
    "AlterReplicaLogDirsResponse",
    versions="0-2",
    flexible="2+",
    fields=[
        Field("throttle_time_ms", INT32),
        Field(
            "results",
            Array(
                Field("topic_name", STRING),
                Field("partitions", Array(Field("partition_index", INT32), Field("error_code", INT16))),
            ),
        ),
    ],
)

API = Api(34, "AlterReplicaLogDirs", AlterReplicaLogDirsRequest, AlterReplicaLogDirsResponse)
