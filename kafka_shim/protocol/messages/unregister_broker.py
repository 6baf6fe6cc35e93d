"""UnregisterBroker (key 64): remove a broker's registration from the KRaft cluster (KIP-500)."""

from kafka_shim.protocol.api import Api
from kafka_shim.protocol.schema import INT16, INT32, STRING, Field, Message

UnregisterBrokerRequest = Message(
    "UnregisterBrokerRequest", versions="0", flexible="0+", fields=[Field("broker_id", INT32)]
)

UnregisterBrokerResponse = Message(
    "UnregisterBrokerResponse",
    versions="0",
    flexible="0+",
    fields=[
        Field("throttle_time_ms", INT32),
        Field("error_code", INT16),
        Field("error_message", STRING, nullable="0+", default=None),
    ],
)

API = Api(64, "UnregisterBroker", UnregisterBrokerRequest, UnregisterBrokerResponse)
