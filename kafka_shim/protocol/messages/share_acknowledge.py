"""ShareAcknowledge (key 79): a share-group member acknowledges records without fetching.

v1 is the first stable version (Kafka 4.1); v2 (Kafka 4.2, KIP-1222) adds renew
acknowledgements and answers the acquisition lock timeout.
"""

from kafka_shim.protocol.api import Api
from kafka_shim.protocol.messages.fetch import _LEADER_ID_AND_EPOCH
from kafka_shim.protocol.messages.metadata import ZERO_UUID
from kafka_shim.protocol.messages.share_fetch import UNKNOWN_LEADER, acknowledgement_batches, node_endpoints
from kafka_shim.protocol.schema import BOOL, INT16, INT32, STRING, UUID, Array, Field, Message, Names

ShareAcknowledgeRequest = Message(
    "ShareAcknowledgeRequest",
    versions="1-2",
    flexible="0+",
    fields=[
        Field("group_id", STRING, nullable="0+", default=None, names=Names.GROUP),
        Field("member_id", STRING, nullable="0+"),
        Field("share_session_epoch", INT32),
        Field("is_renew_ack", BOOL, "2+"),
        Field(
            "topics",
            Array(
                Field("topic_id", UUID, default=ZERO_UUID, names=Names.TOPIC),
                Field(
                    "partitions",
                    Array(
                        Field("partition_index", INT32, names=Names.PARTITION),
                        Field("acknowledgement_batches", acknowledgement_batches()),
                    ),
                ),
            ),
        ),
    ],
)

ShareAcknowledgeResponse = Message(
    "ShareAcknowledgeResponse",
    versions="1-2",
    flexible="0+",
    fields=[
        Field("throttle_time_ms", INT32),
        Field("error_code", INT16),
        Field("error_message", STRING, nullable="0+", default=None),
        Field("acquisition_lock_timeout_ms", INT32, "2+"),
        Field(
            "responses",
            Array(
                Field("topic_id", UUID, default=ZERO_UUID),
                Field(
                    "partitions",
                    Array(
                        Field("partition_index", INT32),
                        Field("error_code", INT16),
                        Field("error_message", STRING, nullable="0+", default=None),
                        Field("current_leader", _LEADER_ID_AND_EPOCH, default=UNKNOWN_LEADER),
                    ),
                ),
            ),
        ),
        Field("node_endpoints", node_endpoints()),
    ],
)

API = Api(79, "ShareAcknowledge", ShareAcknowledgeRequest, ShareAcknowledgeResponse)
