"""ShareFetch (key 78): a share-group member fetches records it acquires for a while, and
acknowledges earlier ones in the same request.

v1 is the first stable version (Kafka 4.1); v2 (Kafka 4.2, KIP-1206 and KIP-1222) adds the
acquire mode and renew acknowledgements. The share session epoch is 0 to open a session,
-1 to close it, otherwise the next of a sequence.
"""

from collections.abc import Mapping
from types import MappingProxyType

from kafka_shim.protocol.api import Api
from kafka_shim.protocol.messages.fetch import _LEADER_ID_AND_EPOCH
from kafka_shim.protocol.messages.metadata import ZERO_UUID
from kafka_shim.protocol.schema import (
    BOOL,
    INT8,
    INT16,
    INT32,
    INT64,
    RECORDS,
    STRING,
    UUID,
    Array,
    Field,
    Message,
    Names,
)

# AcknowledgeTypes: 0 a gap (no record at the offset), 1 accept, 2 release, 3 reject, 4 renew (v2+).
GAP, ACCEPT, RELEASE, REJECT, RENEW = 0, 1, 2, 3, 4
# ShareAcquireMode (v2+): acquire whole batches, or at most max_records.
BATCH_OPTIMIZED, RECORD_LIMIT = 0, 1
OPEN_SESSION_EPOCH, CLOSE_SESSION_EPOCH = 0, -1
# CurrentLeader when none is named (its fields' defaults): -1, -1.
UNKNOWN_LEADER: Mapping[str, int] = MappingProxyType({"leader_id": -1, "leader_epoch": -1})


def acknowledgement_batches() -> Array:
    return Array(
        Field("first_offset", INT64),
        Field("last_offset", INT64),
        Field("acknowledge_types", Array(INT8)),
    )


def node_endpoints() -> Array:
    return Array(
        Field("node_id", INT32),
        Field("host", STRING),
        Field("port", INT32),
        Field("rack", STRING, nullable="0+", default=None),
    )


ShareFetchRequest = Message(
    "ShareFetchRequest",
    versions="1-2",
    flexible="0+",
    fields=[
        Field("group_id", STRING, nullable="0+", default=None, names=Names.GROUP),
        Field("member_id", STRING, nullable="0+"),
        Field("share_session_epoch", INT32),
        Field("max_wait_ms", INT32),
        Field("min_bytes", INT32),
        Field("max_bytes", INT32, default=0x7FFFFFFF),
        Field("max_records", INT32, "1+"),
        Field("batch_size", INT32, "1+"),
        Field("share_acquire_mode", INT8, "2+"),
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
        Field(
            "forgotten_topics_data",
            Array(
                Field("topic_id", UUID, default=ZERO_UUID, names=Names.TOPIC),
                Field("partitions", Array(INT32), names=Names.PARTITION),
            ),
        ),
    ],
)

ShareFetchResponse = Message(
    "ShareFetchResponse",
    versions="1-2",
    flexible="0+",
    fields=[
        Field("throttle_time_ms", INT32),
        Field("error_code", INT16),
        Field("error_message", STRING, nullable="0+", default=None),
        Field("acquisition_lock_timeout_ms", INT32),
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
                        Field("acknowledge_error_code", INT16),
                        Field("acknowledge_error_message", STRING, nullable="0+", default=None),
                        Field("current_leader", _LEADER_ID_AND_EPOCH, default=UNKNOWN_LEADER),
                        Field("records", RECORDS, nullable="0", default=b""),
                        Field(
                            "acquired_records",
                            Array(
                                Field("first_offset", INT64),
                                Field("last_offset", INT64),
                                Field("delivery_count", INT16),
                            ),
                        ),
                    ),
                ),
            ),
        ),
        Field("node_endpoints", node_endpoints()),
    ],
)

API = Api(78, "ShareFetch", ShareFetchRequest, ShareFetchResponse)
