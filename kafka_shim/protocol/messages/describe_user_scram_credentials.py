"""DescribeUserScramCredentials (key 50): which SCRAM mechanisms each user has, and their
iteration counts (never the credentials)."""

from kafka_shim.protocol.api import Api
from kafka_shim.protocol.schema import INT8, INT16, INT32, STRING, Array, Field, Message

DescribeUserScramCredentialsRequest = Message(
    "DescribeUserScramCredentialsRequest",
    versions="0",
    flexible="0+",
    fields=[
        # null or empty: every user
        Field("users", Array(Field("name", STRING)), nullable="0+", default=None),
    ],
)

DescribeUserScramCredentialsResponse = Message(
    "DescribeUserScramCredentialsResponse",
    versions="0",
    flexible="0+",
    fields=[
        Field("throttle_time_ms", INT32),
        Field("error_code", INT16),
        Field("error_message", STRING, nullable="0+"),  # "" by default, as Kafka's JSON
        Field(
            "results",
            Array(
                Field("user", STRING),
                Field("error_code", INT16),
                Field("error_message", STRING, nullable="0+"),  # "" by default
                Field("credential_infos", Array(Field("mechanism", INT8), Field("iterations", INT32))),
            ),
        ),
    ],
)

API = Api(
    50,
    "DescribeUserScramCredentials",
    DescribeUserScramCredentialsRequest,
    DescribeUserScramCredentialsResponse,
)
