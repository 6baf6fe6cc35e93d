from kafka_shim.protocol.api import Api
from kafka_shim.protocol.schema import BOOL, INT16, INT32, INT64, STRING, Array, Field, Message

ApiVersionsRequest = Message(
    "ApiVersionsRequest",
    versions="0-4",
    flexible="3+",
    fields=[
        Field("client_software_name", STRING, "3+"),
        Field("client_software_version", STRING, "3+"),
    ],
)

ApiVersionsResponse = Message(
    "ApiVersionsResponse",
    versions="0-4",
    flexible="3+",
    fields=[
        Field("error_code", INT16),
        Field(
            "api_keys",
            Array(
                Field("api_key", INT16),
                Field("min_version", INT16),
                Field("max_version", INT16),
            ),
        ),
        Field("throttle_time_ms", INT32, "1+"),
        Field(
            "supported_features",
            Array(
                Field("name", STRING),
                Field("min_version", INT16),
                Field("max_version", INT16),
            ),
            "3+",
            tag=0,
        ),
        Field("finalized_features_epoch", INT64, "3+", tag=1, default=-1),
        Field(
            "finalized_features",
            Array(
                Field("name", STRING),
                Field("max_version_level", INT16),
                Field("min_version_level", INT16),
            ),
            "3+",
            tag=2,
        ),
        Field("zk_migration_ready", BOOL, "3+", tag=3),
    ],
)

API = Api(18, "ApiVersions", ApiVersionsRequest, ApiVersionsResponse)
