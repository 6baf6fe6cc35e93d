"""Delegation tokens (KIP-48), as a single KRaft node's DelegationTokenControlManager keeps them:
created for an owner with renewers, an expiry (`delegation.token.expiry.time.ms`) that renewals
move on and a maximum lifetime (`delegation.token.max.lifetime.ms`) nothing moves; the HMAC is
HmacSHA512 of the token id under `delegation.token.secret.key`. Without a secret key the token
APIs answer DELEGATION_TOKEN_AUTH_DISABLED, as Kafka does.

A token is a SCRAM login (Kafka's `tokenauth=true` extension): the token id is the username and
the base64 of the HMAC the password, for either SCRAM mechanism; the session's principal is the
token's owner. Expired tokens stay (answering DELEGATION_TOKEN_EXPIRED, listed by describe)
until the sweep every `delegation.token.expiry.check.interval.ms` removes them, as Kafka's
controller does; no login is accepted with one.

Kept in the data directory (`delegation-tokens.json`, mode 0600, written atomically before a
change is applied) or, for --memory, only in memory. Like Kafka's DelegationTokenRecord the file
holds no HMAC: it is made again from the secret key on start. Pure: the time is an argument.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import uuid
from dataclasses import asdict, dataclass, replace
from pathlib import Path

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.shim.security.scram_store import MIN_ITERATIONS, ScramCredential, ScramMechanism
from kafka_shim.storage.errors import StorageStartupError
from kafka_shim.storage.swap import write_atomically

TOKENS_FILE = "delegation-tokens.json"
USER_TYPE = "User"


@dataclass(frozen=True)
class Token:
    token_id: str
    owner: str  # principals in Kafka's form, "User:alice"
    requester: str
    renewers: tuple[str, ...]
    issue_ms: int
    expiry_ms: int
    max_ms: int

    def expired(self, now_ms: int) -> bool:
        return self.max_ms < now_ms or self.expiry_ms < now_ms

    def owner_or_renewer(self, principal: str) -> bool:
        """Kafka's TokenInformation.ownerOrRenewer, for describing: the requester counts."""
        return principal in (self.owner, self.requester) or principal in self.renewers

    def may_renew(self, principal: str) -> bool:
        """The controller's allowedToRenew: the owner and the renewers only."""
        return principal == self.owner or principal in self.renewers


@dataclass(frozen=True)
class Outcome:
    """A renewal's or expiry's answer: the error and the new expiry timestamp."""

    error_code: ErrorCode
    expiry_ms: int = 0


class DelegationTokens:
    def __init__(
        self,
        data_dir: Path | None,
        secret_key: str | None,
        max_lifetime_ms: int,
        expiry_time_ms: int,
        check_interval_ms: int,
    ) -> None:
        self._data_dir = data_dir
        self._secret = secret_key.encode("utf-8") if secret_key else None
        self.max_lifetime_ms = max_lifetime_ms
        self.expiry_time_ms = expiry_time_ms
        self._check_interval_ms = check_interval_ms
        self._last_sweep_ms: int | None = None
        self._tokens: dict[str, Token] = {}
        # token id -> mechanism -> the SCRAM credential of its HMAC (random salt), made on first use
        self._credentials: dict[str, dict[ScramMechanism, ScramCredential]] = {}
        self.reload()

    def reload(self) -> None:
        """The tokens as the file holds them (at start, and after another broker process
        changed them: shim.processes.cluster_metadata); none without a file."""
        path = None if self._data_dir is None else self._data_dir / TOKENS_FILE
        tokens: dict[str, Token] = {}
        if path is not None and path.exists():
            try:
                for fields in json.loads(path.read_text(encoding="utf-8")):
                    token = Token(**{**fields, "renewers": tuple(fields["renewers"])})
                    tokens[token.token_id] = token
            except (ValueError, TypeError, KeyError) as exc:
                raise StorageStartupError(
                    f"{path} holds no delegation tokens this broker wrote: {exc!r}"
                ) from exc
        for gone in set(self._credentials) - set(tokens):
            self._credentials.pop(gone, None)
        self._tokens = tokens

    @property
    def enabled(self) -> bool:
        return self._secret is not None

    def hmac_of(self, token_id: str) -> bytes:
        assert self._secret is not None
        return hmac.digest(self._secret, token_id.encode("utf-8"), hashlib.sha512)

    def create(
        self, owner: str, requester: str, renewers: list[str], max_lifetime_ms: int, now_ms: int
    ) -> Token:
        """A new token (the caller has checked that tokens are enabled and the principals)."""
        self.sweep(now_ms)
        lifetime = (
            self.max_lifetime_ms if max_lifetime_ms <= 0 else min(self.max_lifetime_ms, max_lifetime_ms)
        )
        max_ms = now_ms + lifetime
        token = Token(
            str(uuid.uuid4()),
            owner,
            requester,
            tuple(renewers),
            now_ms,
            min(max_ms, now_ms + self.expiry_time_ms),
            max_ms,
        )
        self._apply({**self._tokens, token.token_id: token})
        return token

    def renew(self, token_hmac: bytes, principal: str, period_ms: int, now_ms: int) -> Outcome:
        """DelegationTokenControlManager.renewDelegationToken's checks, in its order."""
        token, refusal = self._usable(token_hmac, principal, now_ms, refuse_expired=True)
        if token is None:
            return Outcome(refusal)
        period = self.expiry_time_ms if period_ms <= 0 else min(self.expiry_time_ms, period_ms)
        expiry = min(token.max_ms, now_ms + period)
        self._apply({**self._tokens, token.token_id: replace(token, expiry_ms=expiry)})
        return Outcome(ErrorCode.NONE, expiry)

    def expire(self, token_hmac: bytes, principal: str, period_ms: int, now_ms: int) -> Outcome:
        """expireDelegationToken: a negative period removes the token at once (even an expired
        one); otherwise its expiry comes forward, capped by its maximum."""
        token, refusal = self._usable(token_hmac, principal, now_ms, refuse_expired=False)
        if token is None:
            return Outcome(refusal)
        if period_ms < 0:
            self._apply({tid: t for tid, t in self._tokens.items() if tid != token.token_id})
            return Outcome(ErrorCode.NONE, now_ms)
        if token.expired(now_ms):
            return Outcome(ErrorCode.DELEGATION_TOKEN_EXPIRED)
        expiry = min(token.max_ms, now_ms + period_ms)
        self._apply({**self._tokens, token.token_id: replace(token, expiry_ms=expiry)})
        return Outcome(ErrorCode.NONE, expiry)

    def _usable(
        self, token_hmac: bytes, principal: str, now_ms: int, refuse_expired: bool
    ) -> tuple[Token | None, ErrorCode]:
        self.sweep(now_ms)
        token = self._by_hmac(token_hmac)
        if token is None:
            return None, ErrorCode.DELEGATION_TOKEN_NOT_FOUND
        if refuse_expired and token.expired(now_ms):
            return None, ErrorCode.DELEGATION_TOKEN_EXPIRED
        if not token.may_renew(principal):
            return None, ErrorCode.DELEGATION_TOKEN_OWNER_MISMATCH
        return token, ErrorCode.NONE

    def _by_hmac(self, token_hmac: bytes) -> Token | None:
        return next(
            (t for t in self._tokens.values() if hmac.compare_digest(self.hmac_of(t.token_id), token_hmac)),
            None,
        )

    def tokens(self, now_ms: int) -> list[Token]:
        self.sweep(now_ms)
        return sorted(self._tokens.values(), key=lambda t: (t.issue_ms, t.token_id))

    def sweep(self, now_ms: int) -> None:
        """Remove the expired tokens once per delegation.token.expiry.check.interval.ms."""
        if self._last_sweep_ms is None:
            self._last_sweep_ms = now_ms
        if now_ms - self._last_sweep_ms < self._check_interval_ms:
            return
        self._last_sweep_ms = now_ms
        if any(t.expired(now_ms) for t in self._tokens.values()):
            self._apply({tid: t for tid, t in self._tokens.items() if not t.expired(now_ms)})

    def login(
        self, token_id: str, mechanism: ScramMechanism, now_ms: int
    ) -> tuple[str, ScramCredential, int] | None:
        """The owner and SCRAM credential a `tokenauth` login with `token_id` is checked
        against, and the token's expiry (the session's end); None for an unknown or expired
        token, or with tokens disabled."""
        token = self._tokens.get(token_id)
        if not self.enabled or token is None or token.expired(now_ms):
            return None
        by_mechanism = self._credentials.setdefault(token_id, {})
        credential = by_mechanism.get(mechanism)
        if credential is None:
            password = base64.b64encode(self.hmac_of(token_id)).decode("ascii")
            credential = by_mechanism[mechanism] = ScramCredential.from_password(
                mechanism, password, MIN_ITERATIONS
            )
        return token.owner, credential, token.expiry_ms

    def _apply(self, tokens: dict[str, Token]) -> None:
        """Write the new set down, then keep it: a failed write (OSError) changes nothing."""
        if self._data_dir is not None:
            document = [asdict(t) for t in sorted(tokens.values(), key=lambda t: t.token_id)]
            write_atomically(self._data_dir, TOKENS_FILE, json.dumps(document, indent=1), mode=0o600)
        for gone in set(self._tokens) - set(tokens):
            self._credentials.pop(gone, None)
        self._tokens = tokens
