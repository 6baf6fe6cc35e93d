"""ShareGroupDescribe: a share group's epochs, assignor and members with their assignments.
A group of another type is GROUP_ID_NOT_FOUND ("not a share group"), a group that does not
exist too, as Kafka answers."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.protocol.messages.consumer_group_describe import AUTHORIZED_OPERATIONS_OMITTED
from kafka_shim.protocol.messages.find_coordinator import GROUP_KEY_TYPE
from kafka_shim.protocol.messages.share_group_describe import API
from kafka_shim.shim.context import RequestContext
from kafka_shim.shim.coordinator.consumer.types import Topics
from kafka_shim.shim.coordinator.share.group import ShareGroup, ShareMember
from kafka_shim.shim.coordinator.share.manager import ASSIGNOR_NAME
from kafka_shim.shim.security.authorizer import AclOperation, ResourceType
from kafka_shim.shim.share.requests import DISABLED, share_groups_enabled

if TYPE_CHECKING:  # the views exist for the type checker (protocol.viewgen)
    from kafka_shim.protocol.views.share_group_describe import ShareGroupDescribeRequestData

__all__ = ["API", "handle"]


def _member(member: ShareMember, topics: Topics) -> dict[str, Any]:
    partitions = []
    for topic_id, parts in sorted(member.assignment.items()):
        info = topics.by_id(topic_id)
        name = "" if info is None else info.name  # a topic deleted since
        partitions.append({"topic_id": topic_id, "topic_name": name, "partitions": sorted(parts)})
    return {
        "member_id": member.member_id,
        "rack_id": member.rack_id,
        "member_epoch": member.member_epoch,
        "client_id": member.client_id,
        "client_host": member.client_host,
        "subscribed_topic_names": list(member.subscribed_topic_names),
        "assignment": {"topic_partitions": partitions},
    }


def _described(group: ShareGroup, topics: Topics) -> dict[str, Any]:
    return {
        "error_code": ErrorCode.NONE,
        "group_id": group.group_id,
        "group_state": group.state.value,
        "group_epoch": group.group_epoch,
        "assignment_epoch": group.assignment_epoch,
        "assignor_name": ASSIGNOR_NAME,
        "members": [_member(m, topics) for m in group.members.values()],
    }


def _refused(group_id: str, error: ErrorCode, message: str | None) -> dict[str, Any]:
    return {
        "error_code": error,
        "error_message": message,
        "group_id": group_id,
        "group_state": "Dead",
        "group_epoch": -1,
        "assignment_epoch": -1,
        "assignor_name": "",
        "members": [],
    }


async def handle(ctx: RequestContext, request: ShareGroupDescribeRequestData) -> dict[str, Any]:
    broker = ctx.broker
    allowed = ctx.authorized_names(AclOperation.DESCRIBE, ResourceType.GROUP, request.group_ids)
    groups = []
    for group_id in request.group_ids:
        group = broker.group_service.share_group(group_id)
        if not share_groups_enabled(ctx):
            described = _refused(group_id, ErrorCode.UNSUPPORTED_VERSION, DISABLED)
        elif group_id not in allowed:
            described = _refused(group_id, ctx.refusal(AclOperation.DESCRIBE, ResourceType.GROUP), None)
        elif not ctx.coordinates(GROUP_KEY_TYPE, group_id):
            described = _refused(group_id, ErrorCode.NOT_COORDINATOR, None)
        elif not group_id:
            described = _refused(group_id, ErrorCode.INVALID_GROUP_ID, "Group id can't be empty.")
        elif group is None:
            kind = broker.group_service.group_type(group_id)
            message = (
                f"Group {group_id} not found." if kind is None else f"Group {group_id} is not a share group."
            )
            described = _refused(group_id, ErrorCode.GROUP_ID_NOT_FOUND, message)
        else:
            described = _described(group, broker.group_service.topics)
        operations = AUTHORIZED_OPERATIONS_OMITTED
        if request.include_authorized_operations and described["error_code"] == ErrorCode.NONE:
            operations = ctx.authorized_operations(ResourceType.GROUP, group_id)
        groups.append(described | {"authorized_operations": operations})
    return {"throttle_time_ms": 0, "groups": groups}
