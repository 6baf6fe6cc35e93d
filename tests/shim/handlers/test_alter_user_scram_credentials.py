"""AlterUserScramCredentials writes scram-credentials.json before it changes what logins are
checked against: a failed write (a full disk, through the storage seam) answers
KAFKA_STORAGE_ERROR for every user and leaves the old credentials in force."""

from __future__ import annotations

import errno
from pathlib import Path

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.shim.handlers import alter_user_scram_credentials
from kafka_shim.shim.security.scram_store import ScramMechanism
from kafka_shim.storage.faults import FAULTS
from tests.helpers import Harness


def upsert(name: str, password: bytes) -> dict[str, object]:
    return {
        "name": name,
        "mechanism": ScramMechanism.SCRAM_SHA_256,
        "iterations": 4096,
        "salt": b"salt",
        "salted_password": password,
    }


def test_a_credential_that_cannot_be_written_is_refused_and_the_old_one_stays(tmp_path: Path) -> None:
    h = Harness(data_dir=tmp_path, users=(("alice", "alice-secret"),))
    FAULTS.arm("file:scram-credentials.json", errno=errno.ENOSPC)
    try:
        answer = h.call(
            alter_user_scram_credentials, 0, {"deletions": [], "upsertions": [upsert("alice", b"x" * 32)]}
        )
    finally:
        FAULTS.clear()
    assert [(r.user, r.error_code) for r in answer.results] == [("alice", ErrorCode.KAFKA_STORAGE_ERROR)]
    assert h.broker.credentials.verify_plain("alice", "alice-secret")
    written = h.call(
        alter_user_scram_credentials, 0, {"deletions": [], "upsertions": [upsert("bob", b"y" * 32)]}
    )
    assert [(r.user, r.error_code) for r in written.results] == [("bob", ErrorCode.NONE)]
