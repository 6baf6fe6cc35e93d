"""AlterUserScramCredentials: upsert or delete SCRAM credentials, validated as Kafka's
ScramControlManager does (one change per user per request, 4096..16384 iterations), once
the principal may ALTER the cluster (ControllerApis.handleAlterUserScramCredentials)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.protocol.messages.alter_user_scram_credentials import API
from kafka_shim.shim.context import RequestContext
from kafka_shim.shim.security.authorizer import CLUSTER_NAME, AclOperation, ResourceType
from kafka_shim.shim.security.scram_store import (
    MAX_ITERATIONS,
    MIN_ITERATIONS,
    ScramCredential,
    ScramMechanism,
)

if TYPE_CHECKING:  # the views exist for the type checker (protocol.viewgen)
    from kafka_shim.protocol.views.alter_user_scram_credentials import AlterUserScramCredentialsRequestData

__all__ = ["API", "handle"]

Refusal = tuple[ErrorCode, str]


def _mechanism(value: int) -> ScramMechanism:
    try:
        return ScramMechanism(value)
    except ValueError:
        return ScramMechanism.UNKNOWN


def _invalid(name: str, mechanism: ScramMechanism) -> Refusal | None:
    if not name:
        return ErrorCode.UNACCEPTABLE_CREDENTIAL, "Username must not be empty"
    if mechanism is ScramMechanism.UNKNOWN:
        return ErrorCode.UNSUPPORTED_SASL_MECHANISM, "Unknown SCRAM mechanism"
    return None


def _refused(request: AlterUserScramCredentialsRequestData, code: ErrorCode) -> dict[str, Any]:
    """Kafka's getErrorResponse: every user named, once, in order, with the refusal."""
    users = sorted({change.name for change in [*request.deletions, *request.upsertions]})
    message = f"Request {API.name} is not authorized."
    results = [{"user": user, "error_code": code, "error_message": message} for user in users]
    return {"throttle_time_ms": 0, "results": results}


async def handle(ctx: RequestContext, request: AlterUserScramCredentialsRequestData) -> dict[str, Any]:
    denial = ctx.denial(AclOperation.ALTER, ResourceType.CLUSTER, CLUSTER_NAME)
    if denial is not None:
        return _refused(request, denial)
    store = ctx.broker.credentials
    deletions: dict[str, ScramMechanism] = {}
    upserts: dict[str, tuple[ScramMechanism, ScramCredential]] = {}
    errors: dict[str, Refusal] = {}
    duplicate = (
        ErrorCode.DUPLICATE_RESOURCE,
        "A user credential cannot be altered twice in the same request",
    )
    for deletion in request.deletions:
        name, mechanism = deletion.name, _mechanism(deletion.mechanism)
        if name in errors:
            continue
        if deletions.pop(name, None) is not None:
            errors[name] = duplicate
            continue
        refusal = _invalid(name, mechanism)
        if refusal is None and store.get(name, mechanism) is None:
            refusal = ErrorCode.RESOURCE_NOT_FOUND, "Attempt to delete a user credential that does not exist"
        if refusal is None:
            deletions[name] = mechanism
        else:
            errors[name] = refusal
    for upsertion in request.upsertions:
        name, mechanism = upsertion.name, _mechanism(upsertion.mechanism)
        if name in errors:
            continue
        if deletions.pop(name, None) is not None or upserts.pop(name, None) is not None:
            errors[name] = duplicate
            continue
        refusal = _invalid(name, mechanism)
        if refusal is None and upsertion.iterations < MIN_ITERATIONS:
            refusal = ErrorCode.UNACCEPTABLE_CREDENTIAL, "Too few iterations"
        elif refusal is None and upsertion.iterations > MAX_ITERATIONS:
            refusal = ErrorCode.UNACCEPTABLE_CREDENTIAL, "Too many iterations"
        if refusal is not None:
            errors[name] = refusal
            continue
        credential = ScramCredential.from_salted_password(
            mechanism, upsertion.salt, upsertion.salted_password, upsertion.iterations
        )
        upserts[name] = (mechanism, credential)
    try:
        store.alter(
            [(name, mechanism, credential) for name, (mechanism, credential) in upserts.items()],
            list(deletions.items()),
        )
    except OSError as exc:  # a full disk: nothing changed
        unwritten = ErrorCode.KAFKA_STORAGE_ERROR, f"cannot write the credentials: {exc}"
        errors.update(dict.fromkeys([*deletions, *upserts], unwritten))
        deletions, upserts = {}, {}
    ok = [{"user": name, "error_code": ErrorCode.NONE} for name in [*deletions, *upserts]]
    failed = [
        {"user": name, "error_code": code, "error_message": message}
        for name, (code, message) in errors.items()
    ]
    return {"throttle_time_ms": 0, "results": ok + failed}
