"""DescribeQuorum: the metadata quorum as a single combined KRaft node describes it
(shim.controller.quorum), to a principal that may DESCRIBE the cluster (ControllerApis.handleDescribeQuorum,
KafkaRaftClient.handleDescribeQuorumRequest): `kafka-metadata-quorum.sh describe --status /
--replication` and Admin.describeMetadataQuorum."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.protocol.messages.describe_quorum import API
from kafka_shim.shim.context import RequestContext
from kafka_shim.shim.controller import quorum
from kafka_shim.shim.security.authorizer import CLUSTER_NAME, DENIED_MESSAGES, AclOperation, ResourceType

if TYPE_CHECKING:  # the views exist for the type checker (protocol.viewgen)
    from kafka_shim.protocol.views.describe_quorum import DescribeQuorumRequestData

__all__ = ["API", "handle"]


def _names_the_metadata_partition(request: DescribeQuorumRequestData) -> bool:
    topics = request.topics
    return (
        len(topics) == 1
        and topics[0].topic_name == quorum.METADATA_TOPIC
        and len(topics[0].partitions) == 1
        and topics[0].partitions[0].partition_index == 0
    )


def _unknown_partitions(request: DescribeQuorumRequestData) -> list[dict[str, Any]]:
    """Kafka's getPartitionLevelErrorResponse: each partition asked for, unknown."""
    code = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    return [
        {
            "topic_name": topic.topic_name,
            "partitions": [
                {
                    "partition_index": p.partition_index,
                    "error_code": code,
                    "error_message": code.default_message,
                }
                for p in topic.partitions
            ],
        }
        for topic in request.topics
    ]


async def handle(ctx: RequestContext, request: DescribeQuorumRequestData) -> dict[str, Any]:
    denial = ctx.denial(AclOperation.DESCRIBE, ResourceType.CLUSTER, CLUSTER_NAME)
    if denial is not None:
        return {"error_code": denial, "error_message": DENIED_MESSAGES[denial], "topics": [], "nodes": []}
    if not _names_the_metadata_partition(request):
        return {"error_code": ErrorCode.NONE, "topics": _unknown_partitions(request), "nodes": []}
    partition, nodes = quorum.describe(ctx)
    return {
        "error_code": ErrorCode.NONE,
        "topics": [{"topic_name": quorum.METADATA_TOPIC, "partitions": [partition]}],
        "nodes": nodes,
    }
