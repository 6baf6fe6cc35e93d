"""CreateDelegationToken (key 38): a token for the requester or, v3+, for another owner
(KIP-373), with its renewers and a maximum lifetime."""

from kafka_shim.protocol.api import Api
from kafka_shim.protocol.schema import BYTES, INT16, INT32, INT64, STRING, Array, Field, Message, Sensitive

CreateDelegationTokenRequest = Message(
    "CreateDelegationTokenRequest",
    versions="0-3",
    flexible="2+",
    fields=[
        # null or empty: the requester owns the token
        Field("owner_principal_type", STRING, "3+", nullable="3+", default=None),
        Field("owner_principal_name", STRING, "3+", nullable="3+", default=None),
        Field("renewers", Array(Field("principal_type", STRING), Field("principal_name", STRING))),
        Field("max_lifetime_ms", INT64, default=-1),  # -1: delegation.token.max.lifetime.ms
    ],
)

CreateDelegationTokenResponse = Message(
    "CreateDelegationTokenResponse",
    versions="0-3",
    flexible="2+",
    fields=[
        Field("error_code", INT16),
        Field("principal_type", STRING),
        Field("principal_name", STRING),
        Field("token_requester_principal_type", STRING, "3+"),
        Field("token_requester_principal_name", STRING, "3+"),
        Field("issue_timestamp_ms", INT64),
        Field("expiry_timestamp_ms", INT64),
        Field("max_timestamp_ms", INT64),
        Field("token_id", STRING),
        Field("hmac", BYTES, sensitive=Sensitive.CREDENTIAL),
        Field("throttle_time_ms", INT32),
    ],
)

API = Api(38, "CreateDelegationToken", CreateDelegationTokenRequest, CreateDelegationTokenResponse)
