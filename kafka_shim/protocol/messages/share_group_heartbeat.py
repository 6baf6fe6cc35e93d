"""ShareGroupHeartbeat (key 76): a member of a KIP-932 share group joins, heartbeats and leaves.

v1 is the first stable version (Kafka 4.1; v0 was 4.0's early access, removed): the member
id is the client's own UUID from its first request on, and there is no rebalance timeout
(share groups never revoke). Fields that did not change since the last heartbeat are null.
"""

from kafka_shim.protocol.api import Api
from kafka_shim.protocol.messages.metadata import ZERO_UUID
from kafka_shim.protocol.schema import INT16, INT32, STRING, UUID, Array, Field, Message, Names, Struct

ShareGroupHeartbeatRequest = Message(
    "ShareGroupHeartbeatRequest",
    versions="1",
    flexible="0+",
    fields=[
        Field("group_id", STRING, names=Names.GROUP),
        Field("member_id", STRING),
        Field("member_epoch", INT32),
        Field("rack_id", STRING, nullable="0+", default=None),
        Field("subscribed_topic_names", Array(STRING), nullable="0+", default=None, names=Names.TOPIC),
    ],
)

ShareGroupHeartbeatResponse = Message(
    "ShareGroupHeartbeatResponse",
    versions="1",
    flexible="0+",
    fields=[
        Field("throttle_time_ms", INT32),
        Field("error_code", INT16),
        Field("error_message", STRING, nullable="0+", default=None),
        Field("member_id", STRING, nullable="0+", default=None),
        Field("member_epoch", INT32),
        Field("heartbeat_interval_ms", INT32),
        # null unless the member's assignment changed (or it just joined)
        Field(
            "assignment",
            Struct(
                [
                    Field(
                        "topic_partitions",
                        Array(Field("topic_id", UUID, default=ZERO_UUID), Field("partitions", Array(INT32))),
                    )
                ]
            ),
            nullable="0+",
            default=None,
        ),
    ],
)

API = Api(76, "ShareGroupHeartbeat", ShareGroupHeartbeatRequest, ShareGroupHeartbeatResponse)
