"""Files as a careful operator wants them (docs/storage.md): the data directory kafka-shim
creates is 0700 and its credential, ACL and config files 0600 whatever the umask (Kafka
leaves them to it); a directory the operator made is left as it is, with a warning when other
users can enter it. Driven by a real client: a SCRAM upsert, an ACL, a dynamic broker config."""

from __future__ import annotations

import logging
import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest
from confluent_kafka.admin import (
    AclBinding,
    AclOperation,
    AclPermissionType,
    AdminClient,
    AlterConfigOpType,
    ConfigEntry,
    ConfigResource,
    ResourcePatternType,
    ResourceType,
    ScramCredentialInfo,
    ScramMechanism,
    UserScramCredentialUpsertion,
)

from kafka_shim.protocol.settings.security import STANDARD_AUTHORIZER
from kafka_shim.shim.cli.main import build_parser, config_from_args
from kafka_shim.shim.server import BrokerThread

pytestmark = pytest.mark.clients

PRIVATE_FILES = ("scram-credentials.json", "acls.json", "broker-configs.json", "meta.properties", ".lock")


@pytest.fixture
def permissive_umask() -> Iterator[None]:
    """umask 0: what the umask alone would leave 0777 and 0666."""
    previous = os.umask(0)
    try:
        yield
    finally:
        os.umask(previous)


def start(data_dir: Path) -> BrokerThread:
    argv = ["--data-dir", str(data_dir), "--listeners", "PLAINTEXT://127.0.0.1:0"]
    argv += ["--config", f"authorizer.class.name={STANDARD_AUTHORIZER}"]
    argv += ["--config", "allow.everyone.if.no.acl.found=true"]
    return BrokerThread(config_from_args(build_parser().parse_args(argv))).start()


def write_credentials_acls_and_configs(broker: BrokerThread) -> None:
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    info = ScramCredentialInfo(ScramMechanism.SCRAM_SHA_256, 4096)
    upsert = UserScramCredentialUpsertion("carol", info, b"carol-secret")
    for future in admin.alter_user_scram_credentials([upsert]).values():
        future.result(15)
    binding = AclBinding(
        ResourceType.TOPIC,
        "orders",
        ResourcePatternType.LITERAL,
        "User:carol",
        "*",
        AclOperation.READ,
        AclPermissionType.ALLOW,
    )
    for future in admin.create_acls([binding]).values():
        future.result(15)
    entry = ConfigEntry("log.cleaner.threads", "2", incremental_operation=AlterConfigOpType.SET)
    resource = ConfigResource("BROKER", "0", incremental_configs=[entry])
    for future in admin.incremental_alter_configs([resource]).values():
        future.result(15)


def test_a_data_directory_kafka_shim_creates_is_the_owners_alone(
    tmp_path: Path, permissive_umask: None
) -> None:
    data_dir = tmp_path / "new" / "data"
    broker = start(data_dir)
    try:
        write_credentials_acls_and_configs(broker)
    finally:
        broker.stop()
        broker.broker.close()
    assert stat.S_IMODE(data_dir.stat().st_mode) == 0o700
    files = {path.name: stat.S_IMODE(path.stat().st_mode) for path in data_dir.iterdir() if path.is_file()}
    assert set(PRIVATE_FILES) <= set(files)
    assert files == dict.fromkeys(files, 0o600)  # .clean-shutdown too


def test_an_existing_open_directory_is_left_as_it_is_with_a_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    data_dir = tmp_path / "shared"
    data_dir.mkdir()
    data_dir.chmod(0o755)
    with caplog.at_level(logging.WARNING, logger="kafka_shim.storage.data_dir"):
        broker = start(data_dir)
        broker.stop()
        broker.broker.close()
    assert stat.S_IMODE(data_dir.stat().st_mode) == 0o755
    (warning,) = [r.getMessage() for r in caplog.records if "open to other users" in r.getMessage()]
    assert str(data_dir) in warning and "0755" in warning and "chmod 700" in warning
