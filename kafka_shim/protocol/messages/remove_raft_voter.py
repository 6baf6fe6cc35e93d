"""RemoveRaftVoter (key 81): remove a controller from a dynamic KRaft quorum (KIP-853)."""

from kafka_shim.protocol.api import Api
from kafka_shim.protocol.messages.metadata import ZERO_UUID
from kafka_shim.protocol.schema import INT16, INT32, STRING, UUID, Field, Message

RemoveRaftVoterRequest = Message(
    "RemoveRaftVoterRequest",
    versions="0",
    flexible="0+",
    fields=[
        Field("cluster_id", STRING, nullable="0+", default=None),
        Field("voter_id", INT32),
        Field("voter_directory_id", UUID, default=ZERO_UUID),
    ],
)

RemoveRaftVoterResponse = Message(
    "RemoveRaftVoterResponse",
    versions="0",
    flexible="0+",
    fields=[
        Field("throttle_time_ms", INT32),
        Field("error_code", INT16),
        Field("error_message", STRING, nullable="0+", default=None),
    ],
)

API = Api(81, "RemoveRaftVoter", RemoveRaftVoterRequest, RemoveRaftVoterResponse)
