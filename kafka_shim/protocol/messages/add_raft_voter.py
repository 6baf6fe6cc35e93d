"""AddRaftVoter (key 80): add a controller to a dynamic KRaft quorum (KIP-853)."""

from kafka_shim.protocol.api import Api
from kafka_shim.protocol.messages.metadata import ZERO_UUID
from kafka_shim.protocol.schema import BOOL, INT16, INT32, STRING, UINT16, UUID, Array, Field, Message

AddRaftVoterRequest = Message(
    "AddRaftVoterRequest",
    versions="0-1",
    flexible="0+",
    fields=[
        Field("cluster_id", STRING, nullable="0+", default=None),
        Field("timeout_ms", INT32),
        Field("voter_id", INT32),
        Field("voter_directory_id", UUID, default=ZERO_UUID),
        Field("listeners", Array(Field("name", STRING), Field("host", STRING), Field("port", UINT16))),
        Field("ack_when_committed", BOOL, "1+", default=True),  # KIP-1186 (4.2)
    ],
)

AddRaftVoterResponse = Message(
    "AddRaftVoterResponse",
    versions="0-1",
    flexible="0+",
    fields=[
        Field("throttle_time_ms", INT32),
        Field("error_code", INT16),
        Field("error_message", STRING, nullable="0+", default=None),
    ],
)

API = Api(80, "AddRaftVoter", AddRaftVoterRequest, AddRaftVoterResponse)
