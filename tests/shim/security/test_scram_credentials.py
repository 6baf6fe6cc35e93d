"""Describe/AlterUserScramCredentials through the wire schemas, and the store on disk."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.shim.security.scram_store import CredentialStore, ScramMechanism
from tests.helpers import Harness

DESCRIBE, ALTER = 50, 51
SHA256, SHA512 = ScramMechanism.SCRAM_SHA_256, ScramMechanism.SCRAM_SHA_512


def upsert(name: str, mechanism: int, password: str, iterations: int = 4096) -> dict[str, object]:
    salt = b"0123456789abcdef"
    digest = "sha256" if mechanism == SHA256 else "sha512"
    salted = hashlib.pbkdf2_hmac(digest, password.encode(), salt, iterations)
    return {
        "name": name,
        "mechanism": mechanism,
        "iterations": iterations,
        "salt": salt,
        "salted_password": salted,
    }


def results(response: object) -> dict[str, tuple[int, str | None]]:
    return {r.user: (r.error_code, r.error_message) for r in response.results}  # type: ignore[attr-defined]


def test_alter_then_describe_as_kafka_answers(tmp_path: Path) -> None:
    h = Harness(data_dir=tmp_path)
    response = h.call(
        ALTER,
        0,
        {
            "deletions": [{"name": "ghost", "mechanism": SHA256}],
            "upsertions": [
                upsert("alice", SHA512, "pw"),
                upsert("bob", SHA256, "pw", iterations=1000),
                upsert("carol", SHA256, "pw", iterations=20000),
                upsert("dave", 7, "pw"),
                upsert("", SHA256, "pw"),
                upsert("erin", SHA256, "pw"),
                upsert("erin", SHA512, "pw"),
            ],
        },
    )
    assert results(response) == {
        "alice": (ErrorCode.NONE, None),
        "ghost": (ErrorCode.RESOURCE_NOT_FOUND, "Attempt to delete a user credential that does not exist"),
        "bob": (ErrorCode.UNACCEPTABLE_CREDENTIAL, "Too few iterations"),
        "carol": (ErrorCode.UNACCEPTABLE_CREDENTIAL, "Too many iterations"),
        "dave": (ErrorCode.UNSUPPORTED_SASL_MECHANISM, "Unknown SCRAM mechanism"),
        "": (ErrorCode.UNACCEPTABLE_CREDENTIAL, "Username must not be empty"),
        "erin": (
            ErrorCode.DUPLICATE_RESOURCE,
            "A user credential cannot be altered twice in the same request",
        ),
    }
    everyone = h.call(DESCRIBE, 0, {"users": None})
    assert [
        (r.user, [(c.mechanism, c.iterations) for c in r.credential_infos]) for r in everyone.results
    ] == [("alice", [(SHA512, 4096)])]
    named = h.call(DESCRIBE, 0, {"users": [{"name": "alice"}, {"name": "zed"}, {"name": "zed"}]})
    assert [(r.user, r.error_code, r.error_message) for r in named.results] == [
        ("alice", ErrorCode.NONE, ""),  # the schema's default, as Kafka answers
        (
            "zed",
            ErrorCode.DUPLICATE_RESOURCE,
            "Cannot describe SCRAM credentials for the same user twice in a single request: zed",
        ),
    ]
    missing = h.call(DESCRIBE, 0, {"users": [{"name": "zed"}]})
    assert (
        missing.results[0].error_message == "Attempt to describe a user credential that does not exist: zed"
    )
    # Kept in the data directory: the derived keys, never the password or the salted password.
    stored = json.loads((tmp_path / "scram-credentials.json").read_text())
    assert set(stored["alice"]["SCRAM_SHA_512"]) == {"salt", "stored_key", "server_key", "iterations"}
    h.broker.close()
    reopened = CredentialStore(tmp_path)
    assert reopened.verify_plain("alice", "pw") and not reopened.verify_plain("alice", "nope")


def test_deleting_one_mechanism_keeps_the_other() -> None:
    h = Harness(users=(("alice", "pw"),))
    response = h.call(ALTER, 0, {"deletions": [{"name": "alice", "mechanism": SHA256}], "upsertions": []})
    assert results(response) == {"alice": (ErrorCode.NONE, None)}
    assert list(h.broker.credentials.mechanisms("alice")) == [SHA512]
