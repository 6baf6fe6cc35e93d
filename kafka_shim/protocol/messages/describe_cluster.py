"""DescribeCluster (key 60): the admin client's view of the brokers."""

from kafka_shim.protocol.api import Api
from kafka_shim.protocol.messages.metadata import AUTHORIZED_OPERATIONS_OMITTED
from kafka_shim.protocol.schema import BOOL, INT8, INT16, INT32, STRING, Array, Field, Message

# EndpointType: 1 = broker, 2 = controller (v1+).
ENDPOINT_TYPE_BROKER = 1

DescribeClusterRequest = Message(
    "DescribeClusterRequest",
    versions="0-2",
    flexible="0+",
    fields=[
        Field("include_cluster_authorized_operations", BOOL),
        Field("endpoint_type", INT8, "1+", default=ENDPOINT_TYPE_BROKER),
        Field("include_fenced_brokers", BOOL, "2+", default=False),  # KIP-1073 (4.0)
    ],
)

DescribeClusterResponse = Message(
    "DescribeClusterResponse",
    versions="0-2",
    flexible="0+",
    fields=[
        Field("throttle_time_ms", INT32),
        Field("error_code", INT16),
        Field("error_message", STRING, nullable="0+", default=None),
        Field("endpoint_type", INT8, "1+", default=ENDPOINT_TYPE_BROKER),
        Field("cluster_id", STRING),
        Field("controller_id", INT32, default=-1),
        Field(
            "brokers",
            Array(
                Field("broker_id", INT32),
                Field("host", STRING),
                Field("port", INT32),
                Field("rack", STRING, nullable="0+", default=None),
                Field("is_fenced", BOOL, "2+", default=False),  # never: every broker here is running
            ),
        ),
        Field("cluster_authorized_operations", INT32, default=AUTHORIZED_OPERATIONS_OMITTED),
    ],
)

API = Api(60, "DescribeCluster", DescribeClusterRequest, DescribeClusterResponse)
