"""ExpireDelegationToken (key 40): a token's owner or renewer brings its expiry forward, or
(a negative period) removes it at once."""

from kafka_shim.protocol.api import Api
from kafka_shim.protocol.schema import BYTES, INT16, INT32, INT64, Field, Message, Sensitive

ExpireDelegationTokenRequest = Message(
    "ExpireDelegationTokenRequest",
    versions="0-2",
    flexible="2+",
    fields=[Field("hmac", BYTES, sensitive=Sensitive.CREDENTIAL), Field("expiry_time_period_ms", INT64)],
)

ExpireDelegationTokenResponse = Message(
    "ExpireDelegationTokenResponse",
    versions="0-2",
    flexible="2+",
    fields=[
        Field("error_code", INT16),
        Field("expiry_timestamp_ms", INT64),
        Field("throttle_time_ms", INT32),
    ],
)

API = Api(40, "ExpireDelegationToken", ExpireDelegationTokenRequest, ExpireDelegationTokenResponse)
