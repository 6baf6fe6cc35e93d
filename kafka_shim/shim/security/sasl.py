"""One connection's SASL session on a SASL listener, as Kafka's SaslServerAuthenticator runs it.

A pure state machine (the time is an argument): the server asks `refusal` before any request
is handled, so nothing but ApiVersions, SaslHandshake and SaslAuthenticate is reachable
before authentication; the SaslHandshake and SaslAuthenticate handlers drive the exchange.
After a v0 handshake the tokens travel as bare size-prefixed frames (`raw_token`).

Mechanisms: PLAIN (RFC 4616) and SCRAM-SHA-256/512 (RFC 5802/7677, through `scramp`). A
failure answers Kafka's error and message and sets `failure`: the server sends the answer,
logs one line naming the peer and mechanism, and closes. With connections.max.reauth.ms the
session expires (KIP-368): the client re-authenticates with a new handshake and the same
mechanism and principal, or the connection is closed at its next request.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum

import scramp

from kafka_shim.protocol.api import API_VERSIONS_KEY
from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.protocol.messages import sasl_authenticate, sasl_handshake
from kafka_shim.shim.security.delegation_tokens import DelegationTokens
from kafka_shim.shim.security.principal import user
from kafka_shim.shim.security.scram_store import CredentialStore, ScramMechanism

API_VERSIONS, SASL_HANDSHAKE, SASL_AUTHENTICATE = (
    API_VERSIONS_KEY,
    sasl_handshake.API.key,
    sasl_authenticate.API.key,
)


class State(Enum):
    HANDSHAKE = "handshake"  # before (or between, re-authenticating) a SaslHandshake
    AUTHENTICATE = "authenticate"  # mechanism chosen, tokens flowing
    AUTHENTICATED = "authenticated"
    FAILED = "failed"


@dataclass(frozen=True)
class AuthResult:
    error_code: ErrorCode
    error_message: str | None
    auth_bytes: bytes
    session_lifetime_ms: int


class AuthenticationFailed(Exception):
    """Kafka's SaslAuthenticationException: its message goes to the client."""


class _Plain:
    """PLAIN: the password's keys are derived (PBKDF2, milliseconds of CPU) in `derive`, which
    the server runs off its event loop before `evaluate`; `evaluate` derives inline only when
    nobody did (tests, benchmarks)."""

    def __init__(self, credentials: CredentialStore) -> None:
        self._credentials = credentials
        self.username: str | None = None
        self.complete = False
        self._verdict: tuple[bytes, bool] | None = None  # (token, whether it holds valid credentials)

    def derive(self, token: bytes) -> None:
        """The costly part, safe on a worker thread: it only reads the credential store."""
        parts = _plain_parts(token)
        if parts is not None and parts[1] and parts[2]:
            self._verdict = token, self._credentials.verify_plain(parts[1], parts[2])

    def evaluate(self, token: bytes) -> bytes:
        parts = _plain_parts(token)
        if parts is None:
            count = len(token.decode("utf-8", errors="replace").split("\0"))
            raise AuthenticationFailed(f"Invalid SASL/PLAIN response: expected 3 tokens, got {count}")
        authorization_id, username, password = parts
        if not username:
            raise AuthenticationFailed("Authentication failed: username not specified")
        if not password:
            raise AuthenticationFailed("Authentication failed: password not specified")
        self.username = username
        if self._verdict is not None and self._verdict[0] == token:
            valid = self._verdict[1]
        else:
            valid = self._credentials.verify_plain(username, password)
        if not valid:
            raise AuthenticationFailed("Authentication failed: Invalid username or password")
        if authorization_id and authorization_id != username:
            raise AuthenticationFailed(
                "Authentication failed: Client requested an authorization id that is different from username"
            )
        self.complete = True
        return b""


def _plain_parts(token: bytes) -> tuple[str, str, str] | None:
    """RFC 4616's authzid, authcid and password, or None when the token has not three."""
    parts = token.decode("utf-8", errors="replace").split("\0")
    return (parts[0], parts[1], parts[2]) if len(parts) == 3 else None


class _Scram:
    """The server side of SCRAM over scramp: client-first -> server-first, client-final ->
    server-final. Any failure is a SaslException in Kafka: the client sees the generic message.
    Kafka's `tokenauth=true` extension in client-first logs in with a delegation token."""

    def __init__(
        self, credentials: CredentialStore, mechanism: ScramMechanism, tokens: DelegationTokens | None
    ) -> None:
        self._credentials = credentials
        self._mechanism = mechanism
        self._tokens = tokens
        self._server = scramp.ScramMechanism(mechanism.sasl_name).make_server(self._lookup)
        self.username: str | None = None
        self.token_owner: str | None = None  # a token login's principal
        self.token_expiry_ms: int | None = None  # and when its token expires
        self._token_auth = False
        self.now_ms = 0
        self.complete = False

    def _lookup(self, username: str) -> tuple[bytes, bytes, bytes, int]:
        # RFC 5802 saslname: "=2C" and "=3D" stand for "," and "=".
        self.username = username.replace("=2C", ",").replace("=3D", "=")
        if self._token_auth:
            found = (
                None
                if self._tokens is None
                else self._tokens.login(self.username, self._mechanism, self.now_ms)
            )
            if found is None:
                raise scramp.ScramException(f"Token Authentication failed: Invalid tokenId : {self.username}")
            self.token_owner, token_credential, self.token_expiry_ms = found
            return token_credential.as_scramp()
        credential = self._credentials.get(self.username, self._mechanism)
        if credential is None:
            raise scramp.ScramException("Authentication failed: Invalid user credentials")
        return credential.as_scramp()

    def _accept_repeated_client_nonce(self, client_final: str) -> None:
        """librdkafka before 2.6.1 repeats its own nonce in front of the server's in the final
        message (librdkafka#4895; Debian's 2.0.2 does). Kafka 3.8.1 to 3.9 accept a final nonce
        that ends with the server's, which is what this broker's ApiVersions claim to be; scramp
        wants the exact nonce, so it is told to expect the client's. The proof is still checked
        over the message as sent. (Kafka 4 refuses such clients.)"""
        sent = next((part[2:] for part in client_final.split(",") if part.startswith("r=")), None)
        expected = str(self._server.nonce)
        if sent is not None and sent != expected and sent.endswith(expected):
            self._server.nonce = type(self._server.nonce)(sent)

    def evaluate(self, token: bytes) -> bytes:
        text = token.decode("utf-8", errors="replace")
        try:
            if self._server.stage is None:
                self._set_client_first(text)
                return str(self._server.get_server_first()).encode("utf-8")
            self._accept_repeated_client_nonce(text)
            self._server.set_client_final(text)
            final = str(self._server.get_server_final()).encode("utf-8")
        except scramp.ScramException as exc:
            raise _InvalidCredentials(str(exc)) from exc
        self.complete = True
        return final

    def _set_client_first(self, text: str) -> None:
        """Kafka's SCRAM extensions (`tokenauth=true`) follow the nonce as attributes with long
        names, which scramp refuses: it reads the message without them, then keeps the bare
        message as sent, over which the client's proof is computed."""
        header, _, bare = text.partition(",")
        authzid, _, bare = bare.partition(",")
        attributes = bare.split(",")
        extensions = dict(a.partition("=")[::2] for a in attributes if len(a.partition("=")[0]) > 1)
        self._token_auth = extensions.get("tokenauth", "").lower() == "true"
        standard = ",".join(a for a in attributes if len(a.partition("=")[0]) <= 1)
        self._server.set_client_first(f"{header},{authzid},{standard}")
        self._server.client_first_bare = bare


class _InvalidCredentials(Exception):
    """Kafka's SaslException: the client is told only that the credentials were invalid."""


class SaslSession:
    def __init__(
        self,
        mechanisms: tuple[str, ...],
        credentials: CredentialStore,
        max_reauth_ms: int,
        tokens: DelegationTokens | None = None,
    ) -> None:
        self.mechanisms = mechanisms
        self._credentials = credentials
        self._tokens = tokens
        # Logged in with a delegation token: such a session may not ask for tokens (Kafka's
        # KafkaPrincipal.tokenAuthenticated).
        self.token_authenticated = False
        self._token_expiry_ms: int | None = None
        self._max_reauth_ms = max_reauth_ms
        self.state = State.HANDSHAKE
        self.raw_tokens = False  # a v0 handshake: tokens come as bare frames
        self.mechanism: str | None = None
        self.principal: str | None = None  # once authenticated
        self.expires_at_ms: int | None = None
        self.failure: str | None = None  # set once: the connection is to be closed
        self._exchange: _Plain | _Scram | None = None
        self._reauthenticating_from: tuple[str, str] | None = None  # (mechanism, principal)

    @property
    def authenticated(self) -> bool:
        return self.state is State.AUTHENTICATED

    def refusal(self, api_key: int, now_ms: int) -> str | None:
        """Why a request of `api_key` closes the connection now, or None to handle it."""
        if self.state is State.AUTHENTICATED:
            if api_key == SASL_HANDSHAKE:
                return None  # re-authentication
            if self.expires_at_ms is not None and now_ms >= self.expires_at_ms:
                token_ended = self.expires_at_ms == self._token_expiry_ms
                why = "its delegation token expired" if token_ended else "connections.max.reauth.ms"
                return f"SASL session of {self.principal} expired ({why})"
            return None
        if self.state is State.HANDSHAKE and api_key in (API_VERSIONS, SASL_HANDSHAKE):
            return None
        if self.state is State.AUTHENTICATE and api_key == SASL_AUTHENTICATE and not self.raw_tokens:
            return None
        phase = "handshake" if self.state is State.HANDSHAKE else "authentication"
        return f"Unexpected Kafka request of type {_api_name(api_key)} during SASL {phase}"

    def handshake(self, mechanism: str, version: int) -> ErrorCode:
        """SaslHandshake: UNSUPPORTED_SASL_MECHANISM closes the connection, as in Kafka."""
        if self.state is State.AUTHENTICATED:
            if version == 0:
                return self._fail(ErrorCode.ILLEGAL_SASL_STATE, "re-authentication needs SaslHandshake v1+")
            assert self.mechanism is not None and self.principal is not None
            self._reauthenticating_from = (self.mechanism, self.principal)
        if mechanism not in self.mechanisms:
            return self._fail(
                ErrorCode.UNSUPPORTED_SASL_MECHANISM,
                f"Unsupported SASL mechanism {mechanism} (enabled: {', '.join(self.mechanisms)})",
            )
        self.mechanism = mechanism
        self.raw_tokens = version == 0
        scram = ScramMechanism.by_sasl_name(mechanism)
        self._exchange = (
            _Plain(self._credentials) if scram is None else _Scram(self._credentials, scram, self._tokens)
        )
        self.state = State.AUTHENTICATE
        return ErrorCode.NONE

    def derivation(self, token: bytes) -> Callable[[], None] | None:
        """The key derivation `token` needs before `authenticate` (PLAIN: PBKDF2), for the
        server to run off its event loop with bounded concurrency; None if there is none
        (SCRAM's server side only computes HMACs)."""
        exchange = self._exchange
        if self.state is State.AUTHENTICATE and isinstance(exchange, _Plain):
            return functools.partial(exchange.derive, token)
        return None

    def authenticate(self, token: bytes, now_ms: int) -> AuthResult:
        """One SASL token from the client: the server's token, or Kafka's failure."""
        exchange = self._exchange
        if self.state is not State.AUTHENTICATE or exchange is None:
            message = "SaslAuthenticate request received before a successful SaslHandshake"
            self._fail(ErrorCode.ILLEGAL_SASL_STATE, message)
            return AuthResult(ErrorCode.ILLEGAL_SASL_STATE, message, b"", 0)
        phase = "re-authentication" if self._reauthenticating_from else "authentication"
        try:
            if self._reauthenticating_from and self._reauthenticating_from[0] != self.mechanism:
                raise AuthenticationFailed(
                    f"SASL mechanism '{self.mechanism}' requested by client is not supported for "
                    f"re-authentication of mechanism '{self._reauthenticating_from[0]}'"
                )
            if isinstance(exchange, _Scram):
                exchange.now_ms = now_ms
            response = exchange.evaluate(token)
            if exchange.complete:
                self._complete(exchange, now_ms)
        except AuthenticationFailed as exc:
            return self._failed_result(str(exc), exchange.username)
        except _InvalidCredentials:
            message = (
                f"Authentication failed during {phase} due to invalid credentials with SASL mechanism "
                f"{self.mechanism}"
            )
            return self._failed_result(message, exchange.username)
        expires = self.expires_at_ms if exchange.complete else None
        lifetime = 0 if expires is None else max(0, expires - now_ms)
        return AuthResult(ErrorCode.NONE, None, response, lifetime)

    def raw_token(self, token: bytes, now_ms: int) -> bytes:
        """A v0 exchange: the token's answer, to be sent size-prefixed (failure: close)."""
        result = self.authenticate(token, now_ms)
        return result.auth_bytes

    def _complete(self, exchange: _Plain | _Scram, now_ms: int) -> None:
        assert exchange.username is not None
        token_owner = exchange.token_owner if isinstance(exchange, _Scram) else None
        principal = token_owner or user(exchange.username)
        if self._reauthenticating_from and self._reauthenticating_from[1] != principal:
            previous = self._reauthenticating_from[1]
            raise AuthenticationFailed(
                f"Cannot change principals during re-authentication from {previous.replace(':', '.', 1)}: "
                f"{principal.replace(':', '.', 1)}"
            )
        self.principal = principal
        self.token_authenticated = token_owner is not None
        self.state = State.AUTHENTICATED
        self.raw_tokens = False
        self._exchange = None
        self._reauthenticating_from = None
        # connections.max.reauth.ms, and a token login's token expiry (Kafka's credential
        # lifetime, SaslServerAuthenticator): whichever comes first ends the session
        limits = [now_ms + self._max_reauth_ms] if self._max_reauth_ms > 0 else []
        if isinstance(exchange, _Scram) and exchange.token_expiry_ms is not None:
            limits.append(exchange.token_expiry_ms)
        self.expires_at_ms = min(limits) if limits else None
        self._token_expiry_ms = exchange.token_expiry_ms if isinstance(exchange, _Scram) else None

    def _failed_result(self, message: str, username: str | None) -> AuthResult:
        who = f", user {username!r}" if username else ""
        self._fail(
            ErrorCode.SASL_AUTHENTICATION_FAILED,
            f"SASL authentication failed (mechanism {self.mechanism}{who}): {message}",
        )
        return AuthResult(ErrorCode.SASL_AUTHENTICATION_FAILED, message, b"", 0)

    def _fail(self, code: ErrorCode, reason: str) -> ErrorCode:
        self.state = State.FAILED
        self.failure = reason
        return code


def _api_name(api_key: int) -> str:
    from kafka_shim.protocol.messages import APIS

    api = APIS.get(api_key)
    return api.name if api is not None else f"api key {api_key}"
