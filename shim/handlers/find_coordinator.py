"""FindCoordinator: this single broker coordinates every group and transactional id."""

from __future__ import annotations

from typing import Any

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.protocol.messages.find_coordinator import API
from kafka_shim.shim.context import RequestContext

__all__ = ["API", "handle"]

GROUP_KEY, TRANSACTION_KEY = 0, 1


def _coordinator(ctx: RequestContext, key: str, key_type: int) -> dict[str, Any]:
    broker = ctx.broker
    if key_type not in (GROUP_KEY, TRANSACTION_KEY):
        # Share groups (key type 2) and anything newer are not coordinated here.
        return {"key": key, "error_code": ErrorCode.INVALID_REQUEST, "node_id": -1, "host": "", "port": -1}
    host, port = ctx.advertised_address()  # the listener's this request arrived on, as in Kafka
    return {"key": key, "error_code": ErrorCode.NONE, "node_id": broker.node_id, "host": host, "port": port}


async def handle(ctx: RequestContext, request: Any) -> dict[str, Any]:
    if ctx.api_version >= 4:
        coordinators = [_coordinator(ctx, key, request.key_type) for key in request.coordinator_keys]
        return {"throttle_time_ms": 0, "coordinators": coordinators}
    answer = _coordinator(ctx, request.key, request.key_type)
    del answer["key"]
    return {"throttle_time_ms": 0, **answer}
