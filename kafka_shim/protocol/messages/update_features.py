"""UpdateFeatures (key 57): change finalized feature levels (KIP-584, KIP-778); v2 (Kafka 4.0)
answers without the per-feature results."""

from kafka_shim.protocol.api import Api
from kafka_shim.protocol.schema import BOOL, INT8, INT16, INT32, STRING, Array, Field, Message

# upgrade_type (v1+; v0 says allow_downgrade instead).
UPGRADE = 1
SAFE_DOWNGRADE = 2
UNSAFE_DOWNGRADE = 3

UpdateFeaturesRequest = Message(
    "UpdateFeaturesRequest",
    versions="0-2",
    flexible="0+",
    fields=[
        Field("timeout_ms", INT32, default=60000),
        Field(
            "feature_updates",
            Array(
                Field("feature", STRING),
                Field("max_version_level", INT16),
                Field("allow_downgrade", BOOL, "0"),
                Field("upgrade_type", INT8, "1+", default=UPGRADE),
            ),
        ),
        Field("validate_only", BOOL, "1+"),
    ],
)

UpdateFeaturesResponse = Message(
    "UpdateFeaturesResponse",
    versions="0-2",
    flexible="0+",
    fields=[
        Field("throttle_time_ms", INT32),
        Field("error_code", INT16),
        Field("error_message", STRING, nullable="0+", default=None),
        Field(
            "results",  # v0-1: v2 answers only the top-level error
            Array(
                Field("feature", STRING),
                Field("error_code", INT16),
                Field("error_message", STRING, nullable="0+", default=None),
            ),
            "0-1",
        ),
    ],
)

API = Api(57, "UpdateFeatures", UpdateFeaturesRequest, UpdateFeaturesResponse)
