"""ConsumerGroupHeartbeat (key 68): a member of a KIP-848 consumer group joins, heartbeats,
acknowledges revocations and leaves through this one API.

Kafka 4.x ranges: v1 adds the regular-expression subscription and makes the member id the
client's own (KIP-1082: a v1 member sends a UUID it generated, even on its first request).
Fields that did not change since the last heartbeat are sent as null.
"""

from kafka_shim.protocol.api import Api
from kafka_shim.protocol.messages.metadata import ZERO_UUID
from kafka_shim.protocol.schema import INT16, INT32, STRING, UUID, Array, Field, Message, Names, Struct

# The member epochs that are not epochs: join, leave, and a static member's temporary leave.
JOIN_EPOCH = 0
LEAVE_EPOCH = -1
STATIC_LEAVE_EPOCH = -2


def _topic_partitions() -> Array:
    return Array(
        Field("topic_id", UUID, default=ZERO_UUID, names=Names.TOPIC),
        Field("partitions", Array(INT32), names=Names.PARTITION),
    )


ConsumerGroupHeartbeatRequest = Message(
    "ConsumerGroupHeartbeatRequest",
    versions="0-1",
    flexible="0+",
    fields=[
        Field("group_id", STRING, names=Names.GROUP),
        Field("member_id", STRING),
        Field("member_epoch", INT32),
        Field("instance_id", STRING, nullable="0+", default=None),
        Field("rack_id", STRING, nullable="0+", default=None),
        Field("rebalance_timeout_ms", INT32, default=-1),
        Field("subscribed_topic_names", Array(STRING), nullable="0+", default=None, names=Names.TOPIC),
        Field("subscribed_topic_regex", STRING, "1+", nullable="1+", default=None),
        Field("server_assignor", STRING, nullable="0+", default=None),
        Field("topic_partitions", _topic_partitions(), nullable="0+", default=None),
    ],
)

ConsumerGroupHeartbeatResponse = Message(
    "ConsumerGroupHeartbeatResponse",
    versions="0-1",
    flexible="0+",
    fields=[
        Field("throttle_time_ms", INT32),
        Field("error_code", INT16),
        Field("error_message", STRING, nullable="0+", default=None),
        Field("member_id", STRING, nullable="0+", default=None),
        Field("member_epoch", INT32),
        Field("heartbeat_interval_ms", INT32),
        # null when the member's assignment did not change and the request was not a full one
        Field(
            "assignment",
            Struct([Field("topic_partitions", _topic_partitions())]),
            nullable="0+",
            default=None,
        ),
    ],
)

API = Api(68, "ConsumerGroupHeartbeat", ConsumerGroupHeartbeatRequest, ConsumerGroupHeartbeatResponse)
