"""The four delegation-token APIs as a KRaft broker answers them (KafkaApis and the controller's
DelegationTokenControlManager), through the handlers on a fake clock: who may ask at all
(listener, token logins, the secret key), who may create for whom, who sees which tokens."""

from __future__ import annotations

from typing import Any

import pytest

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.protocol.settings.security import STANDARD_AUTHORIZER
from kafka_shim.shim.security.authorizer import (
    AclBinding,
    AclOperation,
    PatternType,
    PermissionType,
    ResourceType,
)
from kafka_shim.shim.security.sasl import SaslSession
from kafka_shim.shim.security.scram_store import CredentialStore
from tests.helpers import Harness

CREATE, RENEW, EXPIRE, DESCRIBE = 38, 39, 40, 41
ALICE, BOB, CAROL = "User:alice", "User:bob", "User:carol"
DAY = 86_400_000


def broker(secret: str | None = "s3cret", **config: Any) -> Harness:
    return Harness(delegation_token_secret_key=secret, **config)


def ask(h: Harness, key: int, version: int, request: dict[str, Any], principal: str = ALICE,
        protocol: str = "SASL_PLAINTEXT", token_login: bool = False) -> Any:  # fmt: skip
    ctx = h.context(version, principal)
    ctx.security_protocol = protocol
    if token_login:
        ctx.sasl = SaslSession(("SCRAM-SHA-256",), CredentialStore(None), 0)
        ctx.sasl.token_authenticated = True
    return h.call(key, version, request, ctx)


def create(
    h: Harness, principal: str = ALICE, owner: str | None = None, renewers: tuple[str, ...] = ()
) -> Any:
    request = {
        "owner_principal_type": "User" if owner else None,
        "owner_principal_name": owner.partition(":")[2] if owner else None,
        "renewers": [{"principal_type": "User", "principal_name": r.partition(":")[2]} for r in renewers],
        "max_lifetime_ms": -1,
    }
    return ask(h, CREATE, 3, request, principal)


# (case, secret key, security protocol, principal, token login) -> CreateDelegationToken's code
REFUSALS = [
    ("PLAINTEXT listener", "k", "PLAINTEXT", ALICE, False, ErrorCode.DELEGATION_TOKEN_REQUEST_NOT_ALLOWED),
    ("one-way TLS", "k", "SSL", "User:ANONYMOUS", False, ErrorCode.DELEGATION_TOKEN_REQUEST_NOT_ALLOWED),
    ("logged in with a token", "k", "SASL_SSL", ALICE, True, ErrorCode.DELEGATION_TOKEN_REQUEST_NOT_ALLOWED),
    ("no secret key", None, "SASL_PLAINTEXT", ALICE, False, ErrorCode.DELEGATION_TOKEN_AUTH_DISABLED),
    ("mutual TLS", "k", "SSL", "User:CN=alice", False, ErrorCode.NONE),
    ("SASL", "k", "SASL_SSL", ALICE, False, ErrorCode.NONE),
]


@pytest.mark.parametrize(
    ("secret", "protocol", "principal", "token_login", "code"),
    [r[1:] for r in REFUSALS],
    ids=[r[0] for r in REFUSALS],
)
def test_who_may_ask_for_tokens(
    secret: str | None, protocol: str, principal: str, token_login: bool, code: ErrorCode
) -> None:
    h = broker(secret)
    request = {"renewers": [], "max_lifetime_ms": -1}
    created = ask(h, CREATE, 2, request, principal, protocol, token_login)
    assert created.error_code == code
    described = ask(h, DESCRIBE, 2, {"owners": None}, principal, protocol, token_login)
    assert described.error_code == code
    renewed = ask(h, RENEW, 2, {"hmac": b"x", "renew_period_ms": -1}, principal, protocol, token_login)
    if code is ErrorCode.NONE:
        assert renewed.error_code == ErrorCode.DELEGATION_TOKEN_NOT_FOUND
    else:  # the broker's refusal carries the error timestamp -1, the controller's 0
        expiry = -1 if code is ErrorCode.DELEGATION_TOKEN_REQUEST_NOT_ALLOWED else 0
        assert (renewed.error_code, renewed.expiry_timestamp_ms) == (code, expiry)


def test_create_renew_expire_describe_round_trip() -> None:
    h = broker()
    created = create(h, renewers=(BOB,))
    assert created.error_code == 0 and len(created.hmac) == 64  # HmacSHA512
    assert (created.principal_type, created.principal_name) == ("User", "alice")
    assert created.expiry_timestamp_ms == created.issue_timestamp_ms + DAY
    h.clock.now += 1000
    renewed = ask(h, RENEW, 2, {"hmac": created.hmac, "renew_period_ms": -1}, BOB)
    assert (renewed.error_code, renewed.expiry_timestamp_ms) == (0, h.clock.now + DAY)
    mismatch = ask(h, EXPIRE, 2, {"hmac": created.hmac, "expiry_time_period_ms": -1}, CAROL)
    assert mismatch.error_code == ErrorCode.DELEGATION_TOKEN_OWNER_MISMATCH
    (token,) = ask(h, DESCRIBE, 3, {"owners": None}).tokens
    assert (token.token_id, token.hmac, token.expiry_timestamp) == (
        created.token_id,
        created.hmac,
        h.clock.now + DAY,
    )
    assert [(r.principal_type, r.principal_name) for r in token.renewers] == [("User", "bob")]
    expired = ask(h, EXPIRE, 2, {"hmac": created.hmac, "expiry_time_period_ms": -1})
    assert (expired.error_code, expired.expiry_timestamp_ms) == (0, h.clock.now)
    assert ask(h, DESCRIBE, 3, {"owners": None}).tokens == []


def grant(h: Harness, principal: str, operation: AclOperation, resource: ResourceType, name: str) -> None:
    assert h.broker.authorizer is not None
    h.broker.authorizer.create(
        [AclBinding(resource, name, PatternType.LITERAL, principal, "*", operation, PermissionType.ALLOW)]
    )


def test_creating_for_another_owner_needs_create_tokens_on_that_user() -> None:
    h = broker(authorizer_class_name=STANDARD_AUTHORIZER, allow_everyone_if_no_acl_found=False)
    refused = create(h, ALICE, owner=BOB)
    assert refused.error_code == ErrorCode.DELEGATION_TOKEN_AUTHORIZATION_FAILED
    assert (refused.issue_timestamp_ms, refused.max_timestamp_ms, refused.hmac) == (-1, -1, b"")
    assert (refused.principal_name, refused.token_requester_principal_name) == ("bob", "alice")
    grant(h, ALICE, AclOperation.CREATE_TOKENS, ResourceType.USER, BOB)
    created = create(h, ALICE, owner=BOB)
    assert created.error_code == 0
    (token,) = ask(h, DESCRIBE, 3, {"owners": None}, ALICE).tokens  # its requester sees it
    assert (token.principal_name, token.token_requester_principal_name) == ("bob", "alice")
    renewed = ask(h, RENEW, 2, {"hmac": created.hmac, "renew_period_ms": -1}, ALICE)
    assert renewed.error_code == ErrorCode.DELEGATION_TOKEN_OWNER_MISMATCH  # but may not renew it


def test_describe_shows_owned_renewed_and_granted_tokens_only() -> None:
    h = broker(authorizer_class_name=STANDARD_AUTHORIZER, allow_everyone_if_no_acl_found=False)
    alices = create(h, ALICE, renewers=(BOB,)).token_id
    carols = create(h, CAROL).token_id

    def seen(principal: str, owners: list[str] | None = None) -> set[str]:
        named = (
            None if owners is None else [{"principal_type": "User", "principal_name": o[5:]} for o in owners]
        )
        return {t.token_id for t in ask(h, DESCRIBE, 3, {"owners": named}, principal).tokens}

    assert seen(BOB) == {alices}  # a renewer
    assert seen("User:dave") == set()
    grant(h, "User:dave", AclOperation.DESCRIBE, ResourceType.DELEGATION_TOKEN, carols)
    assert seen("User:dave") == {carols}
    grant(h, "User:erin", AclOperation.DESCRIBE_TOKENS, ResourceType.USER, ALICE)
    assert seen("User:erin") == {alices}
    assert seen(CAROL, [ALICE]) == set() and seen(BOB, [BOB]) == {alices}  # owners: owner or renewer
    assert seen(ALICE, []) == set()  # an empty owner list: none


def test_tokens_survive_a_restart(tmp_path: Any) -> None:
    h = broker(data_dir=tmp_path)
    created = create(h)
    h.broker.close()
    again = broker(data_dir=tmp_path)
    (token,) = ask(again, DESCRIBE, 3, {"owners": None}).tokens
    assert (token.token_id, token.hmac) == (created.token_id, created.hmac)
    again.broker.close()
