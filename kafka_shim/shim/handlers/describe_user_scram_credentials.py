"""DescribeUserScramCredentials: each user's SCRAM mechanisms and iteration counts, to a
principal that may DESCRIBE the cluster (KafkaApis.handleDescribeUserScramCredentialsRequest)."""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, Any

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.protocol.messages.describe_user_scram_credentials import API
from kafka_shim.shim.context import RequestContext
from kafka_shim.shim.security.authorizer import CLUSTER_NAME, DENIED_MESSAGES, AclOperation, ResourceType

if TYPE_CHECKING:  # the views exist for the type checker (protocol.viewgen)
    from kafka_shim.protocol.views.describe_user_scram_credentials import (
        DescribeUserScramCredentialsRequestData,
    )

__all__ = ["API", "handle"]


def _describe(ctx: RequestContext, name: str, repeated: bool) -> dict[str, Any]:
    result: dict[str, Any] = {"user": name, "error_code": ErrorCode.NONE, "credential_infos": []}
    if repeated:
        return result | {
            "error_code": ErrorCode.DUPLICATE_RESOURCE,
            "error_message": "Cannot describe SCRAM credentials for the same user twice in a single "
            f"request: {name}",
        }
    credentials = ctx.broker.credentials.mechanisms(name)
    if not credentials:
        return result | {
            "error_code": ErrorCode.RESOURCE_NOT_FOUND,
            "error_message": f"Attempt to describe a user credential that does not exist: {name}",
        }
    infos = [{"mechanism": m, "iterations": c.iterations} for m, c in sorted(credentials.items())]
    return result | {"credential_infos": infos}


async def handle(ctx: RequestContext, request: DescribeUserScramCredentialsRequestData) -> dict[str, Any]:
    denial = ctx.denial(AclOperation.DESCRIBE, ResourceType.CLUSTER, CLUSTER_NAME)
    if denial is not None:
        # Kafka's getErrorResponse: the error at the top, and once per user asked for, unnamed.
        refused = {"user": "", "error_code": denial, "error_message": DENIED_MESSAGES[denial]}
        return {
            "throttle_time_ms": 0,
            "error_code": denial,
            "error_message": DENIED_MESSAGES[denial],
            "results": [refused for _ in request.users or ()],
        }
    names = [user.name for user in request.users or []]
    if not names:
        results = [_describe(ctx, name, False) for name in ctx.broker.credentials.users()]
    else:
        counts = Counter(names)
        results = [_describe(ctx, name, counts[name] > 1) for name in dict.fromkeys(names)]
    return {"throttle_time_ms": 0, "error_code": ErrorCode.NONE, "results": results}
