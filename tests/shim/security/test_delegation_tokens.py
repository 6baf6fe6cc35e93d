"""Delegation tokens as the controller keeps them (shim.security.delegation_tokens), on a fake
clock: lifetimes, renewals, expiry and the sweep, the HMAC, durability (mode 0600, no HMAC on
disk), and a SCRAM login with a token through the SASL session, driven by scramp's client with
Kafka's `tokenauth=true` extension added as the Java client adds it."""

from __future__ import annotations

import base64
import hashlib
import hmac
import stat
from pathlib import Path

import pytest
import scramp

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.shim.security.delegation_tokens import TOKENS_FILE, DelegationTokens, Outcome
from kafka_shim.shim.security.sasl import SaslSession
from kafka_shim.shim.security.scram_store import CredentialStore, ScramMechanism
from kafka_shim.storage.errors import StorageStartupError

SECRET = "dev-secret"
DAY, WEEK, HOUR = 86_400_000, 604_800_000, 3_600_000
T0 = 1_700_000_000_000
OWNER, RENEWER, OTHER = "User:alice", "User:bob", "User:mallory"


def tokens(data_dir: Path | None = None, secret: str | None = SECRET) -> DelegationTokens:
    return DelegationTokens(data_dir, secret, WEEK, DAY, HOUR)


def test_a_token_lives_a_day_until_renewed_and_a_week_at_most() -> None:
    store = tokens()
    token = store.create(OWNER, OWNER, [RENEWER], -1, T0)
    assert (token.issue_ms, token.expiry_ms, token.max_ms) == (T0, T0 + DAY, T0 + WEEK)
    # Kafka's HMAC: HmacSHA512 of the token id under the secret key's UTF-8 bytes
    expected = hmac.new(SECRET.encode(), token.token_id.encode(), hashlib.sha512).digest()
    assert store.hmac_of(token.token_id) == expected
    asked_less = store.create(OWNER, OWNER, [], 3 * HOUR, T0)
    assert (asked_less.expiry_ms, asked_less.max_ms) == (T0 + 3 * HOUR, T0 + 3 * HOUR)


# (who asks, period asked, minutes later) -> the answer; the token: owner alice, renewer bob.
RENEWALS = [
    ("owner renews the default period", OWNER, -1, 60, Outcome(ErrorCode.NONE, T0 + 60 * 60_000 + DAY)),
    ("renewer renews a shorter period", RENEWER, HOUR, 60, Outcome(ErrorCode.NONE, T0 + 2 * HOUR)),
    ("a longer period is cut to the expiry time", OWNER, 2 * DAY, 0, Outcome(ErrorCode.NONE, T0 + DAY)),
    ("near the maximum, the maximum", OWNER, -1, 6 * 24 * 60 + 60, Outcome(ErrorCode.NONE, T0 + WEEK)),
    ("someone else", OTHER, -1, 0, Outcome(ErrorCode.DELEGATION_TOKEN_OWNER_MISMATCH)),
    ("after its expiry", OWNER, -1, 24 * 60 + 1, Outcome(ErrorCode.DELEGATION_TOKEN_EXPIRED)),
]


@pytest.mark.parametrize(
    ("who", "period", "minutes", "answer"), [r[1:] for r in RENEWALS], ids=[r[0] for r in RENEWALS]
)
def test_renewal(who: str, period: int, minutes: int, answer: Outcome) -> None:
    store = tokens()
    token = store.create(OWNER, OWNER, [RENEWER], -1, T0)
    if minutes > 24 * 60 and answer.error_code == ErrorCode.NONE:  # kept alive by daily renewals
        for day in range(1, 7):
            assert store.renew(store.hmac_of(token.token_id), OWNER, -1, T0 + day * DAY - 1).error_code == 0
    store.tokens(T0 + (minutes - 2) * 60_000)  # a sweep two minutes before: nothing had expired
    assert store.renew(store.hmac_of(token.token_id), who, period, T0 + minutes * 60_000) == answer


def test_expire_brings_the_expiry_forward_or_removes_at_once() -> None:
    store = tokens()
    token = store.create(OWNER, OWNER, [RENEWER], -1, T0)
    mac = store.hmac_of(token.token_id)
    assert store.expire(mac, OTHER, 0, T0) == Outcome(ErrorCode.DELEGATION_TOKEN_OWNER_MISMATCH)
    assert store.expire(mac, RENEWER, HOUR, T0) == Outcome(ErrorCode.NONE, T0 + HOUR)
    assert store.expire(mac, OWNER, -1, T0 + 1) == Outcome(ErrorCode.NONE, T0 + 1)
    assert store.tokens(T0 + 1) == []
    assert store.expire(mac, OWNER, -1, T0 + 2) == Outcome(ErrorCode.DELEGATION_TOKEN_NOT_FOUND)
    assert store.renew(b"not a token's hmac", OWNER, -1, T0) == Outcome(ErrorCode.DELEGATION_TOKEN_NOT_FOUND)


def test_expired_tokens_are_listed_until_the_sweep_and_log_in_nowhere() -> None:
    store = tokens()
    store.tokens(T0)  # the sweep's clock starts
    token = store.create(OWNER, OWNER, [], HOUR // 2, T0)
    later = T0 + HOUR // 2 + 1
    assert [t.token_id for t in store.tokens(later)] == [token.token_id]
    assert store.login(token.token_id, ScramMechanism.SCRAM_SHA_256, later) is None
    assert store.tokens(T0 + HOUR) == []


def test_tokens_survive_a_restart_in_a_0600_file_without_their_hmacs(tmp_path: Path) -> None:
    store = tokens(tmp_path)
    token = store.create(OWNER, "User:admin", [RENEWER], -1, T0)
    path = tmp_path / TOKENS_FILE
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    text = path.read_text()
    assert token.token_id in text and base64.b64encode(store.hmac_of(token.token_id)).decode() not in text
    again = tokens(tmp_path)
    assert again.tokens(T0) == [token]
    assert again.hmac_of(token.token_id) == store.hmac_of(token.token_id)


def token_login(session: SaslSession, mechanism: str, token_id: str, password: str) -> tuple[int, int]:
    """A SCRAM exchange as Kafka's client sends it with tokenauth=true: the extension follows
    the nonce in client-first, and the client's proof covers it. The two answers' codes."""
    client = scramp.ScramClient([mechanism], token_id, password)
    first_message = client.get_client_first() + ",tokenauth=true"
    client.client_first_bare += ",tokenauth=true"
    first = session.authenticate(first_message.encode(), T0)
    if first.error_code:
        return first.error_code, first.error_code
    client.set_server_first(first.auth_bytes.decode())
    final = session.authenticate(client.get_client_final().encode(), T0)
    if final.error_code == 0:
        client.set_server_final(final.auth_bytes.decode())  # the client checks the server's proof
    return first.error_code, final.error_code


@pytest.mark.parametrize("mechanism", ["SCRAM-SHA-256", "SCRAM-SHA-512"])
def test_a_token_logs_in_as_its_owner(mechanism: str) -> None:
    store = tokens()
    token = store.create(OWNER, OWNER, [], -1, T0)
    password = base64.b64encode(store.hmac_of(token.token_id)).decode()
    session = SaslSession((mechanism,), CredentialStore(None), 0, store)
    assert session.handshake(mechanism, 1) == ErrorCode.NONE
    assert token_login(session, mechanism, token.token_id, password) == (0, 0)
    assert (session.principal, session.token_authenticated) == (OWNER, True)


@pytest.mark.parametrize(
    ("case", "secret_at_login"),
    [("wrong password", SECRET), ("tokens disabled", None)],
)
def test_a_wrong_token_login_is_refused(case: str, secret_at_login: str | None) -> None:
    store = tokens()
    token = store.create(OWNER, OWNER, [], -1, T0)
    login_store = store if secret_at_login else tokens(secret=None)
    session = SaslSession(("SCRAM-SHA-256",), CredentialStore(None), 0, login_store)
    session.handshake("SCRAM-SHA-256", 1)
    password = (
        "wrong" if case == "wrong password" else base64.b64encode(store.hmac_of(token.token_id)).decode()
    )
    codes = token_login(session, "SCRAM-SHA-256", token.token_id, password)
    assert ErrorCode.SASL_AUTHENTICATION_FAILED in codes and session.failure is not None
    assert session.principal is None


def test_a_file_it_did_not_write_stops_the_start_naming_it(tmp_path: Path) -> None:
    (tmp_path / TOKENS_FILE).write_text('[{"token_id": "x"}]')
    with pytest.raises(StorageStartupError, match=r"delegation-tokens\.json holds no delegation tokens"):
        tokens(tmp_path)


@pytest.mark.parametrize(("max_reauth_ms", "lifetime"), [(0, DAY), (HOUR, HOUR)])
def test_a_token_session_ends_when_its_token_expires(max_reauth_ms: int, lifetime: int) -> None:
    """Kafka's credential lifetime: the session lasts until the token's expiry, or less under
    connections.max.reauth.ms; the client is told it (session_lifetime_ms) and re-authenticates."""
    store = tokens()
    token = store.create(OWNER, OWNER, [], -1, T0)
    session = SaslSession(("SCRAM-SHA-256",), CredentialStore(None), max_reauth_ms, store)
    session.handshake("SCRAM-SHA-256", 1)
    client = scramp.ScramClient(
        ["SCRAM-SHA-256"], token.token_id, base64.b64encode(store.hmac_of(token.token_id)).decode()
    )
    first_message = client.get_client_first() + ",tokenauth=true"
    client.client_first_bare += ",tokenauth=true"
    client.set_server_first(session.authenticate(first_message.encode(), T0).auth_bytes.decode())
    final = session.authenticate(client.get_client_final().encode(), T0)
    assert (final.error_code, final.session_lifetime_ms) == (0, lifetime)
    assert session.refusal(0, T0 + lifetime - 1) is None
    why = "its delegation token expired" if lifetime == DAY else "connections.max.reauth.ms"
    assert session.refusal(0, T0 + lifetime) == f"SASL session of User:alice expired ({why})"
