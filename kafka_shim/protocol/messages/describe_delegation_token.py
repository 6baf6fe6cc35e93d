"""DescribeDelegationToken (key 41): the tokens of some owners (null: every token) that the
requester may see."""

from kafka_shim.protocol.api import Api
from kafka_shim.protocol.schema import BYTES, INT16, INT32, INT64, STRING, Array, Field, Message, Sensitive

DescribeDelegationTokenRequest = Message(
    "DescribeDelegationTokenRequest",
    versions="0-3",
    flexible="2+",
    fields=[
        Field(
            "owners",
            Array(Field("principal_type", STRING), Field("principal_name", STRING)),
            nullable="0+",
            default=None,
        ),
    ],
)

DescribeDelegationTokenResponse = Message(
    "DescribeDelegationTokenResponse",
    versions="0-3",
    flexible="2+",
    fields=[
        Field("error_code", INT16),
        Field(
            "tokens",
            Array(
                Field("principal_type", STRING),
                Field("principal_name", STRING),
                Field("token_requester_principal_type", STRING, "3+"),
                Field("token_requester_principal_name", STRING, "3+"),
                Field("issue_timestamp", INT64),
                Field("expiry_timestamp", INT64),
                Field("max_timestamp", INT64),
                Field("token_id", STRING),
                Field("hmac", BYTES, sensitive=Sensitive.CREDENTIAL),
                Field("renewers", Array(Field("principal_type", STRING), Field("principal_name", STRING))),
            ),
        ),
        Field("throttle_time_ms", INT32),
    ],
)

API = Api(41, "DescribeDelegationToken", DescribeDelegationTokenRequest, DescribeDelegationTokenResponse)
