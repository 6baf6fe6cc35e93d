"""SCRAM credentials (RFC 5802/7677): per user and mechanism the salt, StoredKey, ServerKey
and iteration count, as Kafka keeps them; never a password. Kept in the data directory
(`scram-credentials.json`, written atomically) or, for --memory, only in memory.

PLAIN logins are checked against the same credentials (the password is salted and hashed
with a stored credential's salt and iterations and compared with its StoredKey), so a user
from --user or the admin API logs in with any enabled mechanism.
"""

from __future__ import annotations

import base64
import functools
import hashlib
import hmac
import json
import os
from dataclasses import dataclass
from enum import IntEnum
from pathlib import Path

from kafka_shim.storage.swap import write_atomically

CREDENTIALS_FILE = "scram-credentials.json"
MIN_ITERATIONS = 4096  # Kafka's minimum for both mechanisms
MAX_ITERATIONS = 16384  # Kafka's ScramControlManager refuses more


class ScramMechanism(IntEnum):
    """The mechanism numbers of Describe/AlterUserScramCredentials."""

    UNKNOWN = 0
    SCRAM_SHA_256 = 1
    SCRAM_SHA_512 = 2

    @property
    def sasl_name(self) -> str:
        return self.name.replace("_", "-")

    @property
    def digest(self) -> str:
        return "sha256" if self is ScramMechanism.SCRAM_SHA_256 else "sha512"

    @classmethod
    def by_sasl_name(cls, name: str) -> ScramMechanism | None:
        return next((m for m in cls if m is not cls.UNKNOWN and m.sasl_name == name), None)


MECHANISMS = (ScramMechanism.SCRAM_SHA_256, ScramMechanism.SCRAM_SHA_512)


@dataclass(frozen=True)
class ScramCredential:
    salt: bytes
    stored_key: bytes
    server_key: bytes
    iterations: int

    @classmethod
    def from_salted_password(
        cls, mechanism: ScramMechanism, salt: bytes, salted_password: bytes, iterations: int
    ) -> ScramCredential:
        """What AlterUserScramCredentials' salted password becomes (RFC 5802 section 3)."""
        client_key = hmac.digest(salted_password, b"Client Key", mechanism.digest)
        stored_key = hashlib.new(mechanism.digest, client_key).digest()
        server_key = hmac.digest(salted_password, b"Server Key", mechanism.digest)
        return cls(salt, stored_key, server_key, iterations)

    @classmethod
    def from_password(cls, mechanism: ScramMechanism, password: str, iterations: int) -> ScramCredential:
        import scramp  # imported by the brokers that have users

        salt, stored_key, server_key, count = scramp.ScramMechanism(mechanism.sasl_name).make_auth_info(
            password, iterations
        )
        return cls(salt, stored_key, server_key, count)

    def matches_password(self, mechanism: ScramMechanism, password: str) -> bool:
        import scramp

        _, stored_key, _, _ = scramp.ScramMechanism(mechanism.sasl_name).make_auth_info(
            password, self.iterations, salt=self.salt
        )
        return hmac.compare_digest(stored_key, self.stored_key)

    def as_scramp(self) -> tuple[bytes, bytes, bytes, int]:
        return self.salt, self.stored_key, self.server_key, self.iterations


@functools.cache
def _dummy_credential(mechanism: ScramMechanism) -> ScramCredential:
    """A credential no password matches (random keys), at the default iteration count."""
    size = hashlib.new(mechanism.digest).digest_size
    return ScramCredential(os.urandom(16), os.urandom(size), os.urandom(size), MIN_ITERATIONS)


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


class CredentialStore:
    """Users' SCRAM credentials in `data_dir`; None keeps them in memory only."""

    def __init__(self, data_dir: Path | None) -> None:
        self._data_dir = data_dir
        self._users: dict[str, dict[ScramMechanism, ScramCredential]] = {}
        self.reload()

    def reload(self) -> None:
        """The credentials as the file holds them (at start, and after another broker process
        changed them: shim.processes.cluster_metadata); none without a file."""
        path = None if self._data_dir is None else self._data_dir / CREDENTIALS_FILE
        if path is None or not path.exists():
            self._users = {}
            return
        self._users = {
            name: {
                ScramMechanism[mechanism]: ScramCredential(
                    base64.b64decode(c["salt"]),
                    base64.b64decode(c["stored_key"]),
                    base64.b64decode(c["server_key"]),
                    int(c["iterations"]),
                )
                for mechanism, c in mechanisms.items()
            }
            for name, mechanisms in json.loads(path.read_text(encoding="utf-8")).items()
        }

    def users(self) -> list[str]:
        return sorted(self._users)

    def get(self, name: str, mechanism: ScramMechanism) -> ScramCredential | None:
        return self._users.get(name, {}).get(mechanism)

    def mechanisms(self, name: str) -> dict[ScramMechanism, ScramCredential]:
        return dict(self._users.get(name, {}))

    def verify_plain(self, name: str, password: str) -> bool:
        """PLAIN's check: the password's key derived for both mechanisms, the user's credential
        or, for a mechanism it lacks (an unknown user lacks both), a dummy salted one, and
        never a short cut: every login costs the same two derivations, so the time taken
        tells no one whether the user exists (for users at the default iteration count)."""
        credentials = self._users.get(name, {})
        matches = [
            credentials.get(mechanism, _dummy_credential(mechanism)).matches_password(mechanism, password)
            for mechanism in MECHANISMS
        ]
        return any(matches) and bool(credentials)

    def set_password(self, name: str, password: str, iterations: int = MIN_ITERATIONS) -> None:
        """--user NAME:PASSWORD: credentials for both mechanisms."""
        users = dict(self._users)
        users[name] = {
            mechanism: ScramCredential.from_password(mechanism, password, iterations)
            for mechanism in MECHANISMS
        }
        self._save(users)
        self._users = users

    def alter(
        self,
        upserts: list[tuple[str, ScramMechanism, ScramCredential]],
        deletions: list[tuple[str, ScramMechanism]],
    ) -> None:
        """Write the validated changes down once, then apply them: a failed write (OSError)
        changes nothing."""
        users = {name: dict(mechanisms) for name, mechanisms in self._users.items()}
        for name, mechanism in deletions:
            credentials = users.get(name, {})
            credentials.pop(mechanism, None)
            if not credentials:
                users.pop(name, None)
        for name, mechanism, credential in upserts:
            users.setdefault(name, {})[mechanism] = credential
        self._save(users)
        self._users = users

    def _save(self, users: dict[str, dict[ScramMechanism, ScramCredential]]) -> None:
        if self._data_dir is None:
            return
        document = {
            name: {
                mechanism.name: {
                    "salt": _b64(c.salt),
                    "stored_key": _b64(c.stored_key),
                    "server_key": _b64(c.server_key),
                    "iterations": c.iterations,
                }
                for mechanism, c in mechanisms.items()
            }
            for name, mechanisms in sorted(users.items())
        }
        write_atomically(self._data_dir, CREDENTIALS_FILE, json.dumps(document, indent=1))
