"""SaslAuthenticate: one SASL token of the exchange a SaslHandshake began. A failure is
answered with Kafka's error and message, and the connection is closed after it."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.protocol.messages.sasl_authenticate import API
from kafka_shim.shim.context import RequestContext

if TYPE_CHECKING:  # the views exist for the type checker (protocol.viewgen)
    from kafka_shim.protocol.views.sasl_authenticate import SaslAuthenticateRequestData

__all__ = ["API", "handle"]


async def handle(ctx: RequestContext, request: SaslAuthenticateRequestData) -> dict[str, Any]:
    session = ctx.sasl
    if session is None or session.authenticated:
        return {
            "error_code": ErrorCode.ILLEGAL_SASL_STATE,
            "error_message": "SaslAuthenticate request received after successful authentication",
            "auth_bytes": b"",
        }
    derivation = session.derivation(request.auth_bytes)
    if derivation is not None:  # PLAIN's PBKDF2: milliseconds no other connection should wait for
        await ctx.off_loop(derivation)
    result = session.authenticate(request.auth_bytes, ctx.now_ms())
    if session.authenticated and session.principal is not None:
        ctx.principal = session.principal
    ctx.close_reason = session.failure
    return {
        "error_code": result.error_code,
        "error_message": result.error_message,
        "auth_bytes": result.auth_bytes,
        "session_lifetime_ms": result.session_lifetime_ms,
    }
