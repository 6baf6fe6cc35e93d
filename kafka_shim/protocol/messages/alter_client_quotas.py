"""AlterClientQuotas (key 49): set or remove quota values of entities (KIP-546)."""

from kafka_shim.protocol.api import Api
from kafka_shim.protocol.schema import BOOL, FLOAT64, INT16, INT32, STRING, Array, Field, Message

_ENTITY = Array(Field("entity_type", STRING), Field("entity_name", STRING, nullable="0+"))

AlterClientQuotasRequest = Message(
    "AlterClientQuotasRequest",
    versions="0-1",
    flexible="1+",
    fields=[
        Field(
            "entries",
            Array(
                Field("entity", _ENTITY),
                Field("ops", Array(Field("key", STRING), Field("value", FLOAT64), Field("remove", BOOL))),
            ),
        ),
        Field("validate_only", BOOL),
    ],
)

AlterClientQuotasResponse = Message(
    "AlterClientQuotasResponse",
    versions="0-1",
    flexible="1+",
    fields=[
        Field("throttle_time_ms", INT32),
        Field(
            "entries",
            Array(
                Field("error_code", INT16),
                Field("error_message", STRING, nullable="0+", default=None),
                Field("entity", _ENTITY),
            ),
        ),
    ],
)

API = Api(49, "AlterClientQuotas", AlterClientQuotasRequest, AlterClientQuotasResponse)
