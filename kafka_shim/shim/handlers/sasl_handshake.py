"""SaslHandshake: the client picks a mechanism on a SASL listener (shim.security.sasl).
Elsewhere, as in Kafka, the request is answered ILLEGAL_SASL_STATE."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.protocol.messages.sasl_handshake import API
from kafka_shim.shim.context import RequestContext

if TYPE_CHECKING:  # the views exist for the type checker (protocol.viewgen)
    from kafka_shim.protocol.views.sasl_handshake import SaslHandshakeRequestData

__all__ = ["API", "handle"]


async def handle(ctx: RequestContext, request: SaslHandshakeRequestData) -> dict[str, Any]:
    session = ctx.sasl
    if session is None:
        return {"error_code": ErrorCode.ILLEGAL_SASL_STATE, "mechanisms": []}
    code = session.handshake(request.mechanism, ctx.api_version)
    ctx.close_reason = session.failure
    return {"error_code": code, "mechanisms": list(session.mechanisms)}
