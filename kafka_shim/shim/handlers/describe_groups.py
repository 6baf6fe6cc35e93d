"""DescribeGroups: state, protocol and members; member metadata and assignments only when Stable.

A KIP-848 consumer group or a share group is not a classic group: v0-5 describe it as Kafka
does, Dead with no members (clients describe them with ConsumerGroupDescribe and
ShareGroupDescribe), as they do a group that does not exist; v6 (KIP-1043) answers both with
GROUP_ID_NOT_FOUND and Kafka's message."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.protocol.messages.describe_groups import API, AUTHORIZED_OPERATIONS_OMITTED
from kafka_shim.protocol.messages.find_coordinator import GROUP_KEY_TYPE
from kafka_shim.shim.context import RequestContext
from kafka_shim.shim.security.authorizer import AclOperation, ResourceType

if TYPE_CHECKING:  # the views exist for the type checker (protocol.viewgen)
    from kafka_shim.protocol.views.describe_groups import DescribeGroupsRequestData

__all__ = ["API", "handle"]

FIRST_NOT_FOUND_VERSION = 6


def _not_found(ctx: RequestContext, group_id: str, message: str, operations: int) -> dict[str, Any]:
    """A group that is not a classic one, as each version describes it."""
    if ctx.api_version >= FIRST_NOT_FOUND_VERSION:
        return {"group_id": group_id, "error_code": ErrorCode.GROUP_ID_NOT_FOUND, "error_message": message}
    return {"group_id": group_id, "group_state": "Dead", "authorized_operations": operations}


def _refused(group_id: str, code: ErrorCode) -> dict[str, Any]:
    return {
        "error_code": code,
        "group_id": group_id,
        "group_state": "",
        "protocol_type": "",
        "protocol_data": "",
        "members": [],
    }


async def handle(ctx: RequestContext, request: DescribeGroupsRequestData) -> dict[str, Any]:
    allowed = ctx.authorized_names(AclOperation.DESCRIBE, ResourceType.GROUP, request.groups)
    described = []
    for group_id in request.groups:
        if group_id not in allowed:
            described.append(_refused(group_id, ctx.refusal(AclOperation.DESCRIBE, ResourceType.GROUP)))
            continue
        if not ctx.coordinates(GROUP_KEY_TYPE, group_id):
            described.append(_refused(group_id, ErrorCode.NOT_COORDINATOR))
            continue
        group = ctx.broker.group_service.describe_classic(group_id)
        if group is None:
            # Kafka up to DescribeGroups v5 answers Dead for a consumer or share group.
            operations = AUTHORIZED_OPERATIONS_OMITTED
            if request.include_authorized_operations:
                operations = ctx.authorized_operations(ResourceType.GROUP, group_id)
            described.append(
                _not_found(ctx, group_id, f"Group {group_id} is not a classic group.", operations)
            )
            continue
        if group.state == "Dead" and ctx.api_version >= FIRST_NOT_FOUND_VERSION:
            described.append(_not_found(ctx, group_id, f"Group {group_id} not found.", 0))
            continue
        operations = AUTHORIZED_OPERATIONS_OMITTED
        if request.include_authorized_operations and group.error == ErrorCode.NONE:
            operations = ctx.authorized_operations(ResourceType.GROUP, group_id)
        described.append(
            {
                "error_code": group.error,
                "group_id": group.group_id,
                "group_state": group.state,
                "protocol_type": group.protocol_type,
                "protocol_data": group.protocol_name,
                "members": [
                    {
                        "member_id": m.member_id,
                        "group_instance_id": m.group_instance_id,
                        "client_id": m.client_id,
                        "client_host": m.client_host,
                        "member_metadata": m.metadata,
                        "member_assignment": m.assignment,
                    }
                    for m in group.members
                ],
                "authorized_operations": operations,
            }
        )
    return {"throttle_time_ms": 0, "groups": described}
