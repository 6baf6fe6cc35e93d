"""SaslHandshake and SaslAuthenticate through the wire schemas: on a listener without SASL,
Kafka answers both ILLEGAL_SASL_STATE; on a SASL listener they drive the connection's session."""

from __future__ import annotations

import pytest

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.shim.security.authorizer import ANONYMOUS
from kafka_shim.shim.security.sasl import SaslSession
from tests.helpers import Harness

SASL_HANDSHAKE, SASL_AUTHENTICATE = 17, 36


@pytest.mark.parametrize("version", [0, 1])
def test_a_handshake_without_sasl_is_an_illegal_state(version: int) -> None:
    response = Harness().call(SASL_HANDSHAKE, version, {"mechanism": "PLAIN"})
    assert (response.error_code, response.mechanisms) == (ErrorCode.ILLEGAL_SASL_STATE, [])


@pytest.mark.parametrize("version", [0, 1, 2])
def test_authenticate_without_sasl_is_an_illegal_state(version: int) -> None:
    response = Harness().call(SASL_AUTHENTICATE, version, {"auth_bytes": b"\0u\0p"})
    assert response.error_code == ErrorCode.ILLEGAL_SASL_STATE
    assert response.error_message == "SaslAuthenticate request received after successful authentication"


@pytest.mark.parametrize("version", [0, 1, 2])
def test_plain_login_sets_the_principal_and_the_session_lifetime(version: int) -> None:
    h = Harness(users=(("u", "p"),))
    ctx = h.context(1)
    ctx.sasl = SaslSession(("PLAIN",), h.broker.credentials, 60_000)
    assert ctx.principal == ANONYMOUS
    handshake = h.call(SASL_HANDSHAKE, 1, {"mechanism": "PLAIN"}, ctx)
    assert (handshake.error_code, handshake.mechanisms) == (ErrorCode.NONE, ["PLAIN"])
    ctx.api_version = version
    response = h.call(SASL_AUTHENTICATE, version, {"auth_bytes": b"\0u\0p"}, ctx)
    assert response.error_code == ErrorCode.NONE
    assert response.session_lifetime_ms == (60_000 if version >= 1 else 0)  # a v1+ field
    assert (ctx.principal, ctx.close_reason) == ("User:u", None)


def test_an_unknown_mechanism_closes_after_the_answer() -> None:
    h = Harness()
    ctx = h.context(1)
    ctx.sasl = SaslSession(("SCRAM-SHA-512",), h.broker.credentials, 0)
    response = h.call(SASL_HANDSHAKE, 1, {"mechanism": "GSSAPI"}, ctx)
    assert (response.error_code, response.mechanisms) == (
        ErrorCode.UNSUPPORTED_SASL_MECHANISM,
        ["SCRAM-SHA-512"],
    )
    assert ctx.close_reason is not None and "GSSAPI" in ctx.close_reason
