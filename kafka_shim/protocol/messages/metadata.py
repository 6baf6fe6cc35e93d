"""Metadata (key 3): brokers, controller and topic partitions.

v10+ carries topic ids; v12 lets a topic be named by id alone (name null).
"""

import uuid

from kafka_shim.protocol.api import Api
from kafka_shim.protocol.schema import BOOL, INT16, INT32, STRING, UUID, Array, Field, Message, Names

# Kafka's "no topic id" (Uuid.ZERO_UUID), the default of every uuid field.
ZERO_UUID = uuid.UUID(int=0)

# Kafka's "authorized operations not requested" sentinel (Integer.MIN_VALUE).
AUTHORIZED_OPERATIONS_OMITTED = -(2**31)


MetadataRequest = Message(
    "MetadataRequest",
    versions="0-13",
    flexible="9+",
    fields=[
        # v0: an empty list means all topics; v1+: null means all, empty none.
        Field(
            "topics",
            Array(
                Field("topic_id", UUID, "10+", default=ZERO_UUID, names=Names.TOPIC),
                Field("name", STRING, nullable="10+", names=Names.TOPIC),
            ),
            nullable="1+",
        ),
        Field("allow_auto_topic_creation", BOOL, "4+", default=True),
        Field("include_cluster_authorized_operations", BOOL, "8-10"),
        Field("include_topic_authorized_operations", BOOL, "8+"),
    ],
)

MetadataResponse = Message(
    "MetadataResponse",
    versions="0-13",
    flexible="9+",
    fields=[
        Field("throttle_time_ms", INT32, "3+"),
        Field(
            "brokers",
            Array(
                Field("node_id", INT32),
                Field("host", STRING),
                Field("port", INT32),
                Field("rack", STRING, "1+", nullable="1+", default=None),
            ),
        ),
        Field("cluster_id", STRING, "2+", nullable="2+", default=None),
        Field("controller_id", INT32, "1+", default=-1),
        Field(
            "topics",
            Array(
                Field("error_code", INT16),
                Field("name", STRING, nullable="12+"),
                Field("topic_id", UUID, "10+", default=ZERO_UUID),
                Field("is_internal", BOOL, "1+"),
                Field(
                    "partitions",
                    Array(
                        Field("error_code", INT16),
                        Field("partition_index", INT32),
                        Field("leader_id", INT32),
                        Field("leader_epoch", INT32, "7+", default=-1),
                        Field("replica_nodes", Array(INT32)),
                        Field("isr_nodes", Array(INT32)),
                        Field("offline_replicas", Array(INT32), "5+"),
                    ),
                ),
                Field("topic_authorized_operations", INT32, "8+", default=AUTHORIZED_OPERATIONS_OMITTED),
            ),
        ),
        Field("cluster_authorized_operations", INT32, "8-10", default=AUTHORIZED_OPERATIONS_OMITTED),
        Field("error_code", INT16, "13+", default=0),  # KIP-1102 (4.0): a request-wide error
    ],
)

API = Api(3, "Metadata", MetadataRequest, MetadataResponse)
