"""ApiVersions: the advertised ranges (from the handler registry) and, v3+, the feature
levels (shim.features): supported ranges and finalized levels as a Kafka 3.9 single-node
cluster reports them, with Kafka 4's transaction.version and group.version. Below
transaction.version 2 the versions that exist only for it are not advertised, and below
group.version 1 the consumer group APIs are not, as Kafka does."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.protocol.messages.api_versions import API
from kafka_shim.shim.context import RequestContext
from kafka_shim.shim.features import GROUP_VERSION, SUPPORTED, TRANSACTION_VERSION, FeatureLevels

__all__ = ["API", "TRANSACTION_VERSION", "handle", "supported_ranges", "unsupported_version_answer"]

MAX_TRANSACTION_VERSION = SUPPORTED[TRANSACTION_VERSION][1]
# API key -> highest version a cluster below transaction.version 2 serves:
# Produce 11, EndTxn 4, TxnOffsetCommit 4.
BELOW_TV2_MAX_VERSIONS = {0: 11, 26: 4, 28: 4}
# ApiVersions v3 responses cannot carry a supported minimum of 0 (KAFKA-17011): Kafka
# reports 1 instead.
FIRST_VERSION_WITH_ZERO_MINIMUM = 4


def supported_ranges(transaction_version: int) -> list[dict[str, int]]:
    from kafka_shim.shim.handlers import ADVERTISED_APIS

    caps = BELOW_TV2_MAX_VERSIONS if transaction_version < MAX_TRANSACTION_VERSION else {}
    return [
        {
            "api_key": key,
            "min_version": api.versions.low,
            "max_version": min(api.versions.high, caps.get(key, 2**15)),
        }
        for key, api in ADVERTISED_APIS.items()
    ]


def unsupported_version_answer() -> dict[str, Any]:
    """Kafka's answer to an ApiVersions version it does not know (sent as a v0 body): error
    35 and, of all the ranges, only ApiVersions' own (KIP-511), so the client retries with
    a version both speak."""
    own = {"api_key": API.key, "min_version": API.versions.low, "max_version": API.versions.high}
    return {"error_code": ErrorCode.UNSUPPORTED_VERSION, "api_keys": [own]}


# ConsumerGroupHeartbeat and ConsumerGroupDescribe: advertised, as by Kafka, only from
# group.version 1 (which follows group.coordinator.rebalance.protocols unless UpdateFeatures set it).
CONSUMER_GROUP_APIS = frozenset({68, 69})


def features(levels: FeatureLevels, api_version: int) -> dict[str, Any]:
    lowest = 0 if api_version >= FIRST_VERSION_WITH_ZERO_MINIMUM else 1
    return {
        "supported_features": [
            {"name": name, "min_version": max(low, lowest), "max_version": high}
            for name, (low, high) in SUPPORTED.items()
        ],
        # Kafka reports the metadata offset the levels were finalized at; a client only takes
        # features from a response whose epoch is above the last it saw.
        "finalized_features_epoch": levels.epoch,
        "finalized_features": [
            {"name": name, "max_version_level": level, "min_version_level": level}
            for name, level in levels.finalized.items()
        ],
    }


async def handle(ctx: RequestContext, request: Any) -> Mapping[str, Any]:
    levels = ctx.broker.features
    ranges = supported_ranges(levels.level(TRANSACTION_VERSION))
    if levels.level(GROUP_VERSION) < 1:
        ranges = [r for r in ranges if r["api_key"] not in CONSUMER_GROUP_APIS]
    return {
        "error_code": ErrorCode.NONE,
        "api_keys": ranges,
        "throttle_time_ms": 0,
        **features(levels, ctx.api_version),
    }
