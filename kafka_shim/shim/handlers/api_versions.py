"""ApiVersions: the ranges of the emulated release this broker serves (shim.served_versions)
and, v3+, the release's feature levels (shim.controller.features). Below transaction.version 2 the
versions that exist only for it are not advertised, and below group.version 1 the consumer
group APIs are not, as Kafka does."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.protocol.messages.api_versions import API
from kafka_shim.protocol.releases import TV2
from kafka_shim.shim.context import RequestContext
from kafka_shim.shim.controller.features import (
    GROUP_VERSION,
    SHARE_VERSION,
    TRANSACTION_VERSION,
    FeatureLevels,
)
from kafka_shim.shim.served_versions import ServedVersions

if TYPE_CHECKING:  # the views exist for the type checker (protocol.viewgen)
    from kafka_shim.protocol.views.api_versions import ApiVersionsRequestData

__all__ = ["API", "advertised_ranges", "handle", "unsupported_version_answer"]

# API key -> highest version a cluster below transaction.version 2 serves:
# Produce 11, EndTxn 4, TxnOffsetCommit 4.
BELOW_TV2_MAX_VERSIONS = {0: 11, 26: 4, 28: 4}
# ApiVersions v3 responses cannot carry a supported minimum of 0 (KAFKA-17011): Kafka
# reports 1 instead.
FIRST_VERSION_WITH_ZERO_MINIMUM = 4
# ConsumerGroupHeartbeat and ConsumerGroupDescribe: advertised, as by Kafka 4, only from
# group.version 1 (which follows group.coordinator.rebalance.protocols unless UpdateFeatures set it).
# A release without the group.version feature (3.9) advertises them whatever the protocols, as
# Kafka 3.9 does, and answers a heartbeat UNSUPPORTED_VERSION while the consumer protocol is off.
CONSUMER_GROUP_APIS = frozenset({68, 69})
# The share-group APIs (KIP-932): advertised only from share.version 1, as by Kafka.
SHARE_GROUP_APIS = frozenset({76, 77, 78, 79, 90, 91, 92})


def advertised_ranges(served: ServedVersions, levels: FeatureLevels) -> list[dict[str, int]]:
    caps = BELOW_TV2_MAX_VERSIONS if levels.level(TRANSACTION_VERSION) < TV2 else {}
    has_group_version = GROUP_VERSION in levels.supported
    hidden = CONSUMER_GROUP_APIS if has_group_version and levels.level(GROUP_VERSION) < 1 else frozenset()
    if not levels.at_least(SHARE_VERSION, 1):
        hidden |= SHARE_GROUP_APIS
    return [
        {"api_key": key, "min_version": low, "max_version": min(high, caps.get(key, high))}
        for key, (low, high) in served.advertised().items()
        if key not in hidden
    ]


def unsupported_version_answer() -> dict[str, Any]:
    """Kafka's answer to an ApiVersions version it does not know (sent as a v0 body): error
    35 and, of all the ranges, only ApiVersions' own (KIP-511), so the client retries with
    a version both speak."""
    own = {"api_key": API.key, "min_version": API.versions.low, "max_version": API.versions.high}
    return {"error_code": ErrorCode.UNSUPPORTED_VERSION, "api_keys": [own]}


def features(levels: FeatureLevels, api_version: int) -> dict[str, Any]:
    lowest = 0 if api_version >= FIRST_VERSION_WITH_ZERO_MINIMUM else 1
    return {
        "supported_features": [
            {"name": name, "min_version": max(low, lowest), "max_version": high}
            for name, (low, high) in levels.supported.items()
        ],
        # Kafka reports the metadata offset the levels were finalized at; a client only takes
        # features from a response whose epoch is above the last it saw.
        "finalized_features_epoch": levels.epoch,
        "finalized_features": [
            {"name": name, "max_version_level": level, "min_version_level": level}
            for name, level in levels.finalized.items()
        ],
    }


async def handle(ctx: RequestContext, request: ApiVersionsRequestData) -> Mapping[str, Any]:
    levels = ctx.broker.features
    return {
        "error_code": ErrorCode.NONE,
        "api_keys": advertised_ranges(ctx.broker.served, levels),
        "throttle_time_ms": 0,
        **features(levels, ctx.api_version),
    }
