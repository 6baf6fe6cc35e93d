"""ExpireDelegationToken: the token's owner or a renewer brings its expiry forward to now plus
the period, or with a negative period removes it at once (the controller's
DelegationTokenControlManager.expireDelegationToken). Written before it is answered."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kafka_shim.protocol.messages.expire_delegation_token import API
from kafka_shim.shim.context import RequestContext
from kafka_shim.shim.security.token_requests import change_token

if TYPE_CHECKING:  # the views exist for the type checker (protocol.viewgen)
    from kafka_shim.protocol.views.expire_delegation_token import ExpireDelegationTokenRequestData

__all__ = ["API", "handle"]


async def handle(ctx: RequestContext, request: ExpireDelegationTokenRequestData) -> dict[str, Any]:
    tokens = ctx.broker.delegation_tokens
    return await change_token(
        ctx, lambda now: tokens.expire(request.hmac, ctx.principal, request.expiry_time_period_ms, now)
    ) | {"throttle_time_ms": 0}
