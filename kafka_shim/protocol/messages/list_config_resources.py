"""ListConfigResources (key 74): the config resources a broker keeps. Kafka 3.9 named it
ListClientMetricsResources and listed only client-metrics resources (v0); 4.1 renamed it and
v1 filters by resource type (KIP-1142)."""

from kafka_shim.protocol.api import Api
from kafka_shim.protocol.schema import INT8, INT16, INT32, STRING, Array, Field, Message

# ConfigResource.Type CLIENT_METRICS: what v0 lists, and what a v1 answer's type defaults to.
CLIENT_METRICS = 16

ListConfigResourcesRequest = Message(
    "ListConfigResourcesRequest",
    versions="0-1",
    flexible="0+",
    fields=[Field("resource_types", Array(INT8), "1+")],  # empty: every type
)

ListConfigResourcesResponse = Message(
    "ListConfigResourcesResponse",
    versions="0-1",
    flexible="0+",
    fields=[
        Field("throttle_time_ms", INT32),
        Field("error_code", INT16),
        Field(
            "config_resources",
            Array(
                Field("resource_name", STRING),
                Field("resource_type", INT8, "1+", default=CLIENT_METRICS),
            ),
        ),
    ],
)

API = Api(74, "ListConfigResources", ListConfigResourcesRequest, ListConfigResourcesResponse)
