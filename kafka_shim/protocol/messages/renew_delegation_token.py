"""RenewDelegationToken (key 39): a token's owner or renewer moves its expiry on."""

from kafka_shim.protocol.api import Api
from kafka_shim.protocol.schema import BYTES, INT16, INT32, INT64, Field, Message, Sensitive

RenewDelegationTokenRequest = Message(
    "RenewDelegationTokenRequest",
    versions="0-2",
    flexible="2+",
    fields=[Field("hmac", BYTES, sensitive=Sensitive.CREDENTIAL), Field("renew_period_ms", INT64)],
)

RenewDelegationTokenResponse = Message(
    "RenewDelegationTokenResponse",
    versions="0-2",
    flexible="2+",
    fields=[
        Field("error_code", INT16),
        Field("expiry_timestamp_ms", INT64),
        Field("throttle_time_ms", INT32),
    ],
)

API = Api(39, "RenewDelegationToken", RenewDelegationTokenRequest, RenewDelegationTokenResponse)
