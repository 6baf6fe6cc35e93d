"""DescribeClientQuotas (key 48): the quotas of the entities matching a filter (KIP-546)."""

from kafka_shim.protocol.api import Api
from kafka_shim.protocol.schema import BOOL, FLOAT64, INT8, INT16, INT32, STRING, Array, Field, Message

# A filter component's match_type: a named entity, the default entity, any entity of the type.
MATCH_EXACT = 0
MATCH_DEFAULT = 1
MATCH_SPECIFIED = 2

DescribeClientQuotasRequest = Message(
    "DescribeClientQuotasRequest",
    versions="0-1",
    flexible="1+",
    fields=[
        Field(
            "components",
            Array(
                Field("entity_type", STRING),
                Field("match_type", INT8),
                Field("match", STRING, nullable="0+"),
            ),
        ),
        Field("strict", BOOL),
    ],
)

DescribeClientQuotasResponse = Message(
    "DescribeClientQuotasResponse",
    versions="0-1",
    flexible="1+",
    fields=[
        Field("throttle_time_ms", INT32),
        Field("error_code", INT16),
        Field("error_message", STRING, nullable="0+"),  # "" by default, as Kafka's JSON
        Field(
            "entries",
            Array(
                Field(
                    "entity", Array(Field("entity_type", STRING), Field("entity_name", STRING, nullable="0+"))
                ),
                Field("values", Array(Field("key", STRING), Field("value", FLOAT64))),
            ),
            nullable="0+",
        ),
    ],
)

API = Api(48, "DescribeClientQuotas", DescribeClientQuotasRequest, DescribeClientQuotasResponse)
