"""FindCoordinator: the broker leading the key's internal topic partition coordinates a group
or transactional id (shim.testbroker.cluster; a single broker coordinates them all); with no broker
running for it, COORDINATOR_NOT_AVAILABLE.

`error_message` as Kafka 3.9 fills it: v1-3 carry the error's message, "NONE" on success
(Java's Errors.NONE.message()); v4+ coordinators never carry one (the schema's default, "").
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.protocol.messages.find_coordinator import API, GROUP_KEY_TYPE, TRANSACTION_KEY_TYPE
from kafka_shim.shim.context import RequestContext
from kafka_shim.shim.security.authorizer import DENIED_MESSAGES, AclOperation, ResourceType
from kafka_shim.shim.testbroker.cluster import NO_LEADER

if TYPE_CHECKING:  # the views exist for the type checker (protocol.viewgen)
    from kafka_shim.protocol.views.find_coordinator import FindCoordinatorRequestData

__all__ = ["API", "handle"]

# What a principal must be allowed to DESCRIBE to find a key's coordinator.
_DESCRIBED_AS = {GROUP_KEY_TYPE: ResourceType.GROUP, TRANSACTION_KEY_TYPE: ResourceType.TRANSACTIONAL_ID}


# Java's Errors.X.message() for the errors answered here (v1-3 send it).
_MESSAGES = DENIED_MESSAGES | {
    ErrorCode.NONE: "NONE",
    ErrorCode.COORDINATOR_NOT_AVAILABLE: "The coordinator is not available.",
    ErrorCode.INVALID_REQUEST: ErrorCode.INVALID_REQUEST.default_message,
}


def _coordinator(ctx: RequestContext, key: str, key_type: int) -> dict[str, Any]:
    if key_type not in (GROUP_KEY_TYPE, TRANSACTION_KEY_TYPE):
        # Share groups (key type 2) and anything newer are not coordinated here.
        return {"key": key, "error_code": ErrorCode.INVALID_REQUEST, "node_id": -1, "host": "", "port": -1}
    denial = ctx.denial(AclOperation.DESCRIBE, _DESCRIBED_AS[key_type], key)
    if denial is not None:
        return {"key": key, "error_code": denial, "node_id": -1, "host": "", "port": -1}
    # The coordinator's internal topic is made now, as Kafka makes it (unlike Kafka, the
    # answer need not wait for it).
    broker = ctx.broker
    (
        broker.group_service.offsets_log if key_type == GROUP_KEY_TYPE else broker.transaction_log
    ).create_if_missing()
    node = broker.cluster.coordinator(key_type, key)
    if node == NO_LEADER:
        return {
            "key": key,
            "error_code": ErrorCode.COORDINATOR_NOT_AVAILABLE,
            "node_id": -1,
            "host": "",
            "port": -1,
        }
    host, port = ctx.broker_address(node)  # on the listener this request arrived on, as in Kafka
    return {"key": key, "error_code": ErrorCode.NONE, "node_id": node, "host": host, "port": port}


async def handle(ctx: RequestContext, request: FindCoordinatorRequestData) -> dict[str, Any]:
    if ctx.api_version >= 4:
        coordinators = [_coordinator(ctx, key, request.key_type) for key in request.coordinator_keys]
        return {"throttle_time_ms": 0, "coordinators": coordinators}
    answer = _coordinator(ctx, request.key, request.key_type)
    del answer["key"]
    return {"throttle_time_ms": 0, "error_message": _MESSAGES[answer["error_code"]], **answer}
