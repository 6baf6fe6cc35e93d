"""What the four delegation-token handlers share: whether a connection may ask for tokens at
all (Kafka's KafkaApis.allowTokenRequests) and principals in and out of the wire's two fields."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.shim.context import RequestContext
from kafka_shim.shim.security.authorizer import ANONYMOUS
from kafka_shim.shim.security.delegation_tokens import TOKENS_FILE, Outcome

log = logging.getLogger(__name__)


def token_request_refusal(ctx: RequestContext) -> ErrorCode | None:
    """DELEGATION_TOKEN_REQUEST_NOT_ALLOWED on a PLAINTEXT listener, for a one-way TLS client
    (no certificate: the anonymous principal) and for a session that logged in with a token;
    else whether the broker has a secret key (DELEGATION_TOKEN_AUTH_DISABLED without one)."""
    protocol = ctx.security_protocol
    token_login = ctx.sasl is not None and ctx.sasl.token_authenticated
    if token_login or protocol == "PLAINTEXT" or (protocol == "SSL" and ctx.principal == ANONYMOUS):
        return ErrorCode.DELEGATION_TOKEN_REQUEST_NOT_ALLOWED
    if not ctx.broker.delegation_tokens.enabled:
        return ErrorCode.DELEGATION_TOKEN_AUTH_DISABLED
    return None


def principal_of(principal_type: str, principal_name: str) -> str:
    return f"{principal_type}:{principal_name}"


def principal_fields(principal: str) -> dict[str, Any]:
    """A principal as the wire's principal_type and principal_name."""
    principal_type, _, name = principal.partition(":")
    return {"principal_type": principal_type, "principal_name": name}


def requester_fields(principal: str) -> dict[str, Any]:
    """A token's requester as the wire's token_requester_principal_type and _name."""
    fields = principal_fields(principal)
    return {
        "token_requester_principal_type": fields["principal_type"],
        "token_requester_principal_name": fields["principal_name"],
    }


async def change_token(ctx: RequestContext, change: Callable[[int], Outcome]) -> dict[str, Any]:
    """Renew's or expire's answer: refused as Kafka's broker refuses it (expiry -1), else the
    store's outcome; a change it cannot write is KAFKA_STORAGE_ERROR and changes nothing."""
    refusal = token_request_refusal(ctx)
    if refusal is not None:
        expiry = -1 if refusal is ErrorCode.DELEGATION_TOKEN_REQUEST_NOT_ALLOWED else 0
        return {"error_code": refusal, "expiry_timestamp_ms": expiry}
    try:
        outcome = change(ctx.now_ms())
    except OSError as exc:
        log.warning("delegation token not changed: cannot write %s: %s", TOKENS_FILE, exc)
        return {"error_code": ErrorCode.KAFKA_STORAGE_ERROR, "expiry_timestamp_ms": 0}
    return {"error_code": outcome.error_code, "expiry_timestamp_ms": outcome.expiry_ms}
