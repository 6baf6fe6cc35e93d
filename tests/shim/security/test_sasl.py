"""The SASL session as a pure state machine, driven by a real SCRAM client (scramp's)."""

from __future__ import annotations

import base64
import hashlib
import hmac

import pytest
import scramp

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.shim.security.sasl import SASL_AUTHENTICATE, SaslSession, State
from kafka_shim.shim.security.scram_store import CredentialStore

PRODUCE, METADATA, API_VERSIONS, SASL_HANDSHAKE = 0, 3, 18, 17
MECHANISMS = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512")


@pytest.fixture(scope="module")
def store() -> CredentialStore:
    credentials = CredentialStore(None)
    credentials.set_password("alice", "alice-secret")
    return credentials


def scram_login(session: SaslSession, mechanism: str, name: str, password: str, now: int = 0) -> None:
    client = scramp.ScramClient([mechanism], name, password)
    first = session.authenticate(client.get_client_first().encode(), now)
    assert first.error_code == ErrorCode.NONE, first
    client.set_server_first(first.auth_bytes.decode())
    final = session.authenticate(client.get_client_final().encode(), now)
    assert final.error_code == ErrorCode.NONE, final
    client.set_server_final(final.auth_bytes.decode())  # the client checks the server's proof


@pytest.mark.parametrize("mechanism", ["SCRAM-SHA-256", "SCRAM-SHA-512"])
def test_scram_authenticates_and_only_then_opens_the_data_path(
    store: CredentialStore, mechanism: str
) -> None:
    session = SaslSession(MECHANISMS, store, 0)
    assert session.refusal(API_VERSIONS, 0) is None and session.refusal(SASL_HANDSHAKE, 0) is None
    assert session.refusal(PRODUCE, 0) == "Unexpected Kafka request of type Produce during SASL handshake"
    assert session.handshake(mechanism, 1) == ErrorCode.NONE
    assert (
        session.refusal(METADATA, 0) == "Unexpected Kafka request of type Metadata during SASL authentication"
    )
    assert session.refusal(SASL_AUTHENTICATE, 0) is None
    scram_login(session, mechanism, "alice", "alice-secret")
    assert (session.authenticated, session.principal) == (True, "User:alice")
    assert session.refusal(PRODUCE, 0) is None


@pytest.mark.parametrize(
    ("name", "password"),
    [("alice", "wrong"), ("mallory", "alice-secret")],
    ids=["wrong-password", "unknown-user"],
)
def test_wrong_scram_credentials_get_kafkas_message_and_close(
    store: CredentialStore, name: str, password: str
) -> None:
    session = SaslSession(MECHANISMS, store, 0)
    session.handshake("SCRAM-SHA-512", 1)
    client = scramp.ScramClient(["SCRAM-SHA-512"], name, password)
    result = session.authenticate(client.get_client_first().encode(), 0)
    if result.error_code == ErrorCode.NONE:  # a known user fails on the proof
        client.set_server_first(result.auth_bytes.decode())
        result = session.authenticate(client.get_client_final().encode(), 0)
    assert result.error_code == ErrorCode.SASL_AUTHENTICATION_FAILED
    assert result.error_message == (
        "Authentication failed during authentication due to invalid credentials with SASL mechanism "
        "SCRAM-SHA-512"
    )
    assert session.state is State.FAILED and session.failure is not None
    assert "mechanism SCRAM-SHA-512" in session.failure and repr(name) in session.failure


def test_plain_checks_the_password_against_the_salted_credentials(store: CredentialStore) -> None:
    good = SaslSession(MECHANISMS, store, 0)
    good.handshake("PLAIN", 1)
    assert good.authenticate(b"\0alice\0alice-secret", 0).error_code == ErrorCode.NONE
    assert good.principal == "User:alice"
    bad = SaslSession(MECHANISMS, store, 0)
    bad.handshake("PLAIN", 1)
    result = bad.authenticate(b"\0alice\0nope", 0)
    assert (result.error_code, result.error_message) == (
        ErrorCode.SASL_AUTHENTICATION_FAILED,
        "Authentication failed: Invalid username or password",
    )


@pytest.mark.parametrize(
    ("token", "ok"),
    [
        (b"\0alice\0alice-secret", True),  # known, right password
        (b"\0alice\0nope", False),  # known, wrong password
        (b"\0mallory\0nope", False),  # unknown: a dummy credential costs the same
    ],
)
def test_every_plain_login_derives_the_same_two_keys_off_the_loop(
    store: CredentialStore, monkeypatch: pytest.MonkeyPatch, token: bytes, ok: bool
) -> None:
    """The derivation the server runs on a worker thread is the login's only one, and it is
    the same work whether the user exists or not: timing tells nothing."""
    derived: list[int] = []
    real = hashlib.pbkdf2_hmac

    def counting(name: str, password: bytes, salt: bytes, iterations: int) -> bytes:
        derived.append(iterations)
        return real(name, password, salt, iterations)

    monkeypatch.setattr(hashlib, "pbkdf2_hmac", counting)
    session = SaslSession(MECHANISMS, store, 0)
    session.handshake("PLAIN", 1)
    derivation = session.derivation(token)
    assert derivation is not None
    derivation()
    assert derived == [4096, 4096]
    assert (session.authenticate(token, 0).error_code == ErrorCode.NONE) is ok
    assert derived == [4096, 4096]  # authenticate used the derived verdict


def test_scram_has_no_derivation_to_move_off_the_loop(store: CredentialStore) -> None:
    session = SaslSession(MECHANISMS, store, 0)
    session.handshake("SCRAM-SHA-256", 1)
    assert session.derivation(b"n,,n=alice,r=abc") is None


def test_an_unsupported_mechanism_is_refused_with_the_enabled_ones(store: CredentialStore) -> None:
    session = SaslSession(("SCRAM-SHA-256",), store, 0)
    assert session.handshake("PLAIN", 1) == ErrorCode.UNSUPPORTED_SASL_MECHANISM
    assert session.failure is not None


def test_reauthentication_renews_the_session_and_keeps_the_principal(store: CredentialStore) -> None:
    session = SaslSession(MECHANISMS, store, 60_000)
    session.handshake("SCRAM-SHA-256", 1)
    scram_login(session, "SCRAM-SHA-256", "alice", "alice-secret", now=1000)
    assert session.expires_at_ms == 61_000
    assert session.refusal(PRODUCE, 60_999) is None
    assert (
        session.refusal(PRODUCE, 61_000) == "SASL session of User:alice expired (connections.max.reauth.ms)"
    )
    assert session.handshake("SCRAM-SHA-256", 1) == ErrorCode.NONE  # KIP-368: a new handshake
    scram_login(session, "SCRAM-SHA-256", "alice", "alice-secret", now=61_500)
    assert session.expires_at_ms == 121_500 and session.refusal(PRODUCE, 61_600) is None


def test_reauthentication_cannot_change_mechanism(store: CredentialStore) -> None:
    session = SaslSession(MECHANISMS, store, 60_000)
    session.handshake("PLAIN", 1)
    assert session.authenticate(b"\0alice\0alice-secret", 0).session_lifetime_ms == 60_000
    session.handshake("SCRAM-SHA-256", 1)
    result = session.authenticate(b"n,,n=alice,r=abc", 1)
    assert result.error_message == (
        "SASL mechanism 'SCRAM-SHA-256' requested by client is not supported for re-authentication of "
        "mechanism 'PLAIN'"
    )


def _final_with_nonce(client_first_bare: str, server_first: str, nonce: str, password: str) -> str:
    """A SCRAM-SHA-256 client-final message over `nonce`, proof computed as RFC 5802 says
    (what librdkafka before 2.6.1 sends, its own nonce repeated in front of the server's)."""
    fields = dict(part.split("=", 1) for part in server_first.split(","))
    salted = hashlib.pbkdf2_hmac("sha256", password.encode(), base64.b64decode(fields["s"]), int(fields["i"]))
    client_key = hmac.digest(salted, b"Client Key", "sha256")
    without_proof = f"c=biws,r={nonce}"
    auth_message = f"{client_first_bare},{server_first},{without_proof}".encode()
    signature = hmac.digest(hashlib.sha256(client_key).digest(), auth_message, "sha256")
    proof = bytes(a ^ b for a, b in zip(client_key, signature, strict=True))
    return f"{without_proof},p={base64.b64encode(proof).decode()}"


@pytest.mark.parametrize(("repeat", "accepted"), [(True, True), (False, False)])
def test_librdkafkas_repeated_client_nonce_is_accepted_as_kafka_3_9_does(
    store: CredentialStore, repeat: bool, accepted: bool
) -> None:
    session = SaslSession(MECHANISMS, store, 0)
    session.handshake("SCRAM-SHA-256", 1)
    first_bare = "n=alice,r=clientnonce"
    server_first = session.authenticate(f"n,,{first_bare}".encode(), 0).auth_bytes.decode()
    server_nonce = server_first.split(",")[0][2:]
    nonce = "clientnonce" + server_nonce if repeat else "other" + server_nonce[5:]
    final = session.authenticate(
        _final_with_nonce(first_bare, server_first, nonce, "alice-secret").encode(), 0
    )
    assert (final.error_code == ErrorCode.NONE) is accepted
    assert session.authenticated is accepted
