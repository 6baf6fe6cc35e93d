from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.protocol.messages.api_versions import API
from kafka_shim.shim.context import RequestContext

__all__ = ["API", "handle", "supported_ranges"]


def supported_ranges() -> list[dict[str, int]]:
    from kafka_shim.shim.handlers import ADVERTISED_APIS

    return [
        {"api_key": key, "min_version": api.versions.low, "max_version": api.versions.high}
        for key, api in ADVERTISED_APIS.items()
    ]


# ConsumerGroupHeartbeat and ConsumerGroupDescribe: advertised, as by Kafka, only while
# group.coordinator.rebalance.protocols includes "consumer".
CONSUMER_GROUP_APIS = frozenset({68, 69})


async def handle(ctx: RequestContext, request: Any) -> Mapping[str, Any]:
    ranges = supported_ranges()
    if "consumer" not in ctx.broker.config.rebalance_protocols:
        ranges = [r for r in ranges if r["api_key"] not in CONSUMER_GROUP_APIS]
    return {"error_code": ErrorCode.NONE, "api_keys": ranges, "throttle_time_ms": 0}
