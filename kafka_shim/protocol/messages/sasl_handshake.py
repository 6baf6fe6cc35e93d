"""SaslHandshake (key 17): the client names its SASL mechanism. After v0 the SASL tokens
travel as bare size-prefixed frames; after v1 inside SaslAuthenticate requests."""

from kafka_shim.protocol.api import Api
from kafka_shim.protocol.schema import INT16, STRING, Array, Field, Message

SaslHandshakeRequest = Message(
    "SaslHandshakeRequest",
    versions="0-1",
    flexible="none",
    fields=[Field("mechanism", STRING)],
)

SaslHandshakeResponse = Message(
    "SaslHandshakeResponse",
    versions="0-1",
    flexible="none",
    fields=[
        Field("error_code", INT16),
        Field("mechanisms", Array(STRING)),
    ],
)

API = Api(17, "SaslHandshake", SaslHandshakeRequest, SaslHandshakeResponse)
