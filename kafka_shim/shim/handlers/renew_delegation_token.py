"""RenewDelegationToken: the token's owner or a renewer moves its expiry on by the period asked
(at most delegation.token.expiry.time.ms, never past its maximum lifetime), as the controller's
DelegationTokenControlManager.renewDelegationToken answers. Written before it is answered."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kafka_shim.protocol.messages.renew_delegation_token import API
from kafka_shim.shim.context import RequestContext
from kafka_shim.shim.security.token_requests import change_token

if TYPE_CHECKING:  # the views exist for the type checker (protocol.viewgen)
    from kafka_shim.protocol.views.renew_delegation_token import RenewDelegationTokenRequestData

__all__ = ["API", "handle"]


async def handle(ctx: RequestContext, request: RenewDelegationTokenRequestData) -> dict[str, Any]:
    tokens = ctx.broker.delegation_tokens
    return await change_token(
        ctx, lambda now: tokens.renew(request.hmac, ctx.principal, request.renew_period_ms, now)
    ) | {"throttle_time_ms": 0}
