"""ApiVersions: the advertised ranges (from the handler registry) and, v3+, the
`transaction.version` feature as Kafka 4 reports it: supported 0-2, finalized at the
configured level. Below level 2 the versions that exist only for transaction version
2 are not advertised, so the broker looks like a 3.x cluster to a Kafka 4 client."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.protocol.messages.api_versions import API
from kafka_shim.shim.context import RequestContext

__all__ = ["API", "handle", "supported_ranges", "unsupported_version_answer"]

TRANSACTION_VERSION = "transaction.version"
MAX_TRANSACTION_VERSION = 2
# Kafka reports the metadata offset the features were finalized at; a client only
# takes features from a response whose epoch is above the last it saw (initially -1).
FINALIZED_FEATURES_EPOCH = 1
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


# ConsumerGroupHeartbeat and ConsumerGroupDescribe: advertised, as by Kafka, only while
# group.coordinator.rebalance.protocols includes "consumer".
CONSUMER_GROUP_APIS = frozenset({68, 69})


def features(transaction_version: int, api_version: int) -> dict[str, Any]:
    minimum = 0 if api_version >= FIRST_VERSION_WITH_ZERO_MINIMUM else 1
    finalized = [
        {
            "name": TRANSACTION_VERSION,
            "max_version_level": transaction_version,
            "min_version_level": transaction_version,
        }
    ]
    return {
        "supported_features": [
            {"name": TRANSACTION_VERSION, "min_version": minimum, "max_version": MAX_TRANSACTION_VERSION}
        ],
        "finalized_features_epoch": FINALIZED_FEATURES_EPOCH,
        # A feature at level 0 is not finalized at all.
        "finalized_features": finalized if transaction_version > 0 else [],
    }


async def handle(ctx: RequestContext, request: Any) -> Mapping[str, Any]:
    transaction_version = ctx.broker.config.transaction_version
    ranges = supported_ranges(transaction_version)
    if not ctx.broker.config.consumer_protocol_enabled:
        ranges = [r for r in ranges if r["api_key"] not in CONSUMER_GROUP_APIS]
    return {
        "error_code": ErrorCode.NONE,
        "api_keys": ranges,
        "throttle_time_ms": 0,
        **features(transaction_version, ctx.api_version),
    }
