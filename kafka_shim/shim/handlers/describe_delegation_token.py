"""DescribeDelegationToken: the tokens of the owners asked for (null: all) that the requester
owns or renews, or may see: DESCRIBE on the token or DESCRIBE_TOKENS on its owner
(KafkaApis.handleDescribeTokensRequest and DelegationTokenManager.filterToken). Expired tokens
are listed until the broker's sweep removes them, as on Kafka."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.protocol.messages.describe_delegation_token import API
from kafka_shim.shim.context import RequestContext
from kafka_shim.shim.security.authorizer import AclOperation, ResourceType
from kafka_shim.shim.security.delegation_tokens import Token
from kafka_shim.shim.security.token_requests import (
    principal_fields,
    principal_of,
    requester_fields,
    token_request_refusal,
)

if TYPE_CHECKING:  # the views exist for the type checker (protocol.viewgen)
    from kafka_shim.protocol.views.describe_delegation_token import DescribeDelegationTokenRequestData

__all__ = ["API", "handle"]


def _visible(ctx: RequestContext, token: Token, owners: list[str] | None) -> bool:
    if owners is not None and not any(token.owner_or_renewer(owner) for owner in owners):
        return False
    return (
        token.owner_or_renewer(ctx.principal)
        or ctx.authorize(AclOperation.DESCRIBE, ResourceType.DELEGATION_TOKEN, token.token_id)
        or ctx.authorize(AclOperation.DESCRIBE_TOKENS, ResourceType.USER, token.owner)
    )


def _described(ctx: RequestContext, token: Token) -> dict[str, Any]:
    return {
        **principal_fields(token.owner),
        **requester_fields(token.requester),
        "issue_timestamp": token.issue_ms,
        "expiry_timestamp": token.expiry_ms,
        "max_timestamp": token.max_ms,
        "token_id": token.token_id,
        "hmac": ctx.broker.delegation_tokens.hmac_of(token.token_id),
        "renewers": [principal_fields(renewer) for renewer in token.renewers],
    }


async def handle(ctx: RequestContext, request: DescribeDelegationTokenRequestData) -> dict[str, Any]:
    answer: dict[str, Any] = {"throttle_time_ms": 0, "tokens": []}
    refusal = token_request_refusal(ctx)
    if refusal is not None:
        return answer | {"error_code": refusal}
    if request.owners is not None and not request.owners:
        return answer | {"error_code": ErrorCode.NONE}
    owners = None
    if request.owners is not None:
        owners = [principal_of(o.principal_type, o.principal_name) for o in request.owners]
    tokens = ctx.broker.delegation_tokens.tokens(ctx.now_ms())
    described = [_described(ctx, t) for t in tokens if _visible(ctx, t, owners)]
    return answer | {"error_code": ErrorCode.NONE, "tokens": described}
