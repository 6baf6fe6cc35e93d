"""SaslAuthenticate (key 36): one SASL token each way (KIP-152); v1 adds the session
lifetime after which the client must re-authenticate (KIP-368)."""

from kafka_shim.protocol.api import Api
from kafka_shim.protocol.schema import BYTES, INT16, INT64, STRING, Field, Message, Sensitive

SaslAuthenticateRequest = Message(
    "SaslAuthenticateRequest",
    versions="0-2",
    flexible="2+",
    fields=[Field("auth_bytes", BYTES, sensitive=Sensitive.CREDENTIAL)],
)

SaslAuthenticateResponse = Message(
    "SaslAuthenticateResponse",
    versions="0-2",
    flexible="2+",
    fields=[
        Field("error_code", INT16),
        Field("error_message", STRING, nullable="0+", default=None),
        Field("auth_bytes", BYTES, sensitive=Sensitive.CREDENTIAL),
        Field("session_lifetime_ms", INT64, "1+"),
    ],
)

API = Api(36, "SaslAuthenticate", SaslAuthenticateRequest, SaslAuthenticateResponse)
