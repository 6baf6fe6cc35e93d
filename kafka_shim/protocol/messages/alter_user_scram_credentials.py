"""AlterUserScramCredentials (key 51): add or remove users' SCRAM credentials. The client
sends the salted password (never the password); the broker keeps only the derived keys."""

from kafka_shim.protocol.api import Api
from kafka_shim.protocol.schema import BYTES, INT8, INT16, INT32, STRING, Array, Field, Message, Sensitive

AlterUserScramCredentialsRequest = Message(
    "AlterUserScramCredentialsRequest",
    versions="0",
    flexible="0+",
    fields=[
        Field("deletions", Array(Field("name", STRING), Field("mechanism", INT8))),
        Field(
            "upsertions",
            Array(
                Field("name", STRING),
                Field("mechanism", INT8),
                Field("iterations", INT32),
                Field("salt", BYTES, sensitive=Sensitive.CREDENTIAL),
                Field("salted_password", BYTES, sensitive=Sensitive.CREDENTIAL),
            ),
        ),
    ],
)

AlterUserScramCredentialsResponse = Message(
    "AlterUserScramCredentialsResponse",
    versions="0",
    flexible="0+",
    fields=[
        Field("throttle_time_ms", INT32),
        Field(
            "results",
            Array(
                Field("user", STRING),
                Field("error_code", INT16),
                Field("error_message", STRING, nullable="0+", default=None),
            ),
        ),
    ],
)

API = Api(
    51, "AlterUserScramCredentials", AlterUserScramCredentialsRequest, AlterUserScramCredentialsResponse
)
