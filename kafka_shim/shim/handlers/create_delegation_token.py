"""CreateDelegationToken: a token for the requester or (v3+) for another owner, whom the
requester must be allowed CREATE_TOKENS on (KafkaApis.handleCreateTokenRequest, then the
controller's DelegationTokenControlManager.createDelegationToken). Written before it is answered."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.protocol.messages.create_delegation_token import API
from kafka_shim.shim.context import RequestContext
from kafka_shim.shim.security.authorizer import AclOperation, ResourceType
from kafka_shim.shim.security.delegation_tokens import TOKENS_FILE, USER_TYPE
from kafka_shim.shim.security.token_requests import (
    principal_fields,
    principal_of,
    requester_fields,
    token_request_refusal,
)

if TYPE_CHECKING:  # the views exist for the type checker (protocol.viewgen)
    from kafka_shim.protocol.views.create_delegation_token import CreateDelegationTokenRequestData

__all__ = ["API", "handle"]

log = logging.getLogger(__name__)


async def handle(ctx: RequestContext, request: CreateDelegationTokenRequestData) -> dict[str, Any]:
    requester = ctx.principal
    named = request.owner_principal_name
    owner = principal_of(request.owner_principal_type or "", named) if named else requester
    answer: dict[str, Any] = {
        "throttle_time_ms": 0,
        **principal_fields(owner),
        **requester_fields(requester),
    }
    # The broker's own refusals (CreateDelegationTokenResponse.prepareResponse) carry -1
    # timestamps; the controller's (no secret key) the schema's zeros.
    refused = answer | {"issue_timestamp_ms": -1, "expiry_timestamp_ms": -1, "max_timestamp_ms": -1}
    refusal = token_request_refusal(ctx)
    if refusal is ErrorCode.DELEGATION_TOKEN_REQUEST_NOT_ALLOWED:
        return refused | {"error_code": refusal}
    if owner != requester and not ctx.authorize(AclOperation.CREATE_TOKENS, ResourceType.USER, owner):
        return refused | {"error_code": ErrorCode.DELEGATION_TOKEN_AUTHORIZATION_FAILED}
    if any(r.principal_type != USER_TYPE for r in request.renewers):
        return refused | {"error_code": ErrorCode.INVALID_PRINCIPAL_TYPE}
    if refusal is not None:
        return answer | {"error_code": refusal}
    renewers = [principal_of(r.principal_type, r.principal_name) for r in request.renewers]
    tokens = ctx.broker.delegation_tokens
    try:
        token = tokens.create(owner, requester, renewers, request.max_lifetime_ms, ctx.now_ms())
    except OSError as exc:  # a full disk: no token
        log.warning("delegation token for %s not created: cannot write %s: %s", owner, TOKENS_FILE, exc)
        return answer | {"error_code": ErrorCode.KAFKA_STORAGE_ERROR}
    return answer | {
        "error_code": ErrorCode.NONE,
        "issue_timestamp_ms": token.issue_ms,
        "expiry_timestamp_ms": token.expiry_ms,
        "max_timestamp_ms": token.max_ms,
        "token_id": token.token_id,
        "hmac": tokens.hmac_of(token.token_id),
    }
