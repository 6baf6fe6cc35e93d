"""ConsumerGroupDescribe: a KIP-848 group's epochs, assignor, members and their current and
target assignments. A classic group is GROUP_ID_NOT_FOUND here, as in Kafka (admin clients
then fall back to DescribeGroups). With the consumer protocol off (group.version 0) every group
is UNSUPPORTED_VERSION, as KafkaApis.handleConsumerGroupDescribe answers (Kafka 3.9 advertises
the API regardless)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.protocol.messages.consumer_group_describe import (
    API,
    AUTHORIZED_OPERATIONS_OMITTED,
    CLASSIC_MEMBER_TYPE,
    CONSUMER_MEMBER_TYPE,
)
from kafka_shim.protocol.messages.find_coordinator import GROUP_KEY_TYPE
from kafka_shim.shim.context import RequestContext
from kafka_shim.shim.controller.features import GROUP_VERSION
from kafka_shim.shim.coordinator.consumer import Topics
from kafka_shim.shim.coordinator.consumer.types import Assignment, GroupDescription
from kafka_shim.shim.security.authorizer import AclOperation, ResourceType

if TYPE_CHECKING:  # the views exist for the type checker (protocol.viewgen)
    from kafka_shim.protocol.views.consumer_group_describe import ConsumerGroupDescribeRequestData

__all__ = ["API", "handle"]


def _assignment(assignment: Assignment, topics: Topics) -> dict[str, Any]:
    described = []
    for topic_id, parts in sorted(assignment.items()):
        info = topics.by_id(topic_id)
        name = "" if info is None else info.name  # a topic deleted since
        described.append({"topic_id": topic_id, "topic_name": name, "partitions": sorted(parts)})
    return {"topic_partitions": described}


def _describe(ctx: RequestContext, group_id: str) -> GroupDescription:
    broker = ctx.broker
    early = broker.config.release.early_consumer_groups
    if not group_id:  # Kafka's GroupCoordinatorService answers it without a message
        error = ErrorCode.UNKNOWN_SERVER_ERROR if early else ErrorCode.INVALID_GROUP_ID
        return GroupDescription(error, None, group_id)
    described = broker.group_service.describe_consumer_group(group_id)
    # Kafka 3.9 leaves the message of a refused group out.
    return described._replace(message=None) if early and described.error else described


async def handle(ctx: RequestContext, request: ConsumerGroupDescribeRequestData) -> dict[str, Any]:
    if ctx.broker.features.level(GROUP_VERSION) < 1:
        unsupported = ErrorCode.UNSUPPORTED_VERSION
        return {"groups": [{"group_id": g, "error_code": unsupported} for g in request.group_ids]}
    topics = ctx.broker.group_service.topics
    allowed = ctx.authorized_names(AclOperation.DESCRIBE, ResourceType.GROUP, request.group_ids)
    groups = []
    for group_id in request.group_ids:
        if group_id in allowed and not ctx.coordinates(GROUP_KEY_TYPE, group_id):
            group = GroupDescription(ErrorCode.NOT_COORDINATOR, None, group_id)
        elif group_id in allowed:
            group = _describe(ctx, group_id)
        else:
            group = GroupDescription(ctx.refusal(AclOperation.DESCRIBE, ResourceType.GROUP), None, group_id)
        operations = AUTHORIZED_OPERATIONS_OMITTED
        if request.include_authorized_operations and group.error == ErrorCode.NONE:
            operations = ctx.authorized_operations(ResourceType.GROUP, group_id)
        groups.append(
            {
                "error_code": group.error,
                "error_message": group.message,
                "group_id": group.group_id,
                "group_state": group.state,
                "group_epoch": group.group_epoch,
                "assignment_epoch": group.assignment_epoch,
                "assignor_name": group.assignor,
                "members": [
                    {
                        "member_id": m.member_id,
                        "instance_id": m.instance_id,
                        "rack_id": m.rack_id,
                        "member_epoch": m.member_epoch,
                        "client_id": m.client_id,
                        "client_host": m.client_host,
                        "subscribed_topic_names": list(m.subscribed_topic_names),
                        # Kafka's member holds "" when it has no regex, and describes it so.
                        "subscribed_topic_regex": m.subscribed_topic_regex or "",
                        "assignment": _assignment(m.assignment, topics),
                        "target_assignment": _assignment(m.target_assignment, topics),
                        "member_type": CLASSIC_MEMBER_TYPE
                        if m.uses_classic_protocol
                        else CONSUMER_MEMBER_TYPE,
                    }
                    for m in group.members
                ],
                "authorized_operations": operations,
            }
        )
    return {"throttle_time_ms": 0, "groups": groups}
