"""`--brokers 2 --process-per-broker` keeps one cluster's metadata, as Kafka's controller keeps it
for every broker: ACLs, client quotas, SCRAM credentials, delegation tokens and feature levels
changed by real clients through either process are answered (ACLs enforced, SCRAM users
logged in) by both, survive a restart, and changes made through both at once are all kept."""

from __future__ import annotations

import re
import sys
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest

from compat.targets import launch
from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.protocol.settings.security import STANDARD_AUTHORIZER
from tests.helpers import wait_until
from tests.shim.processes.test_process_per_broker_clients import processes
from tests.wire import WireClient

pytestmark = pytest.mark.clients

METADATA, API_VERSIONS, CREATE_TOPICS, CREATE_ACLS, DESCRIBE_ACLS = 3, 18, 19, 30, 29
DESCRIBE_QUOTAS, ALTER_QUOTAS, DESCRIBE_SCRAM = 48, 49, 50
SETTINGS = [
    "--console",
    "off",
    "--config",
    f"authorizer.class.name={STANDARD_AUTHORIZER}",
    "--config",
    "allow.everyone.if.no.acl.found=true",
]
TOPIC = "guarded"
FOLLOWED_WITHIN_S = 5.0  # the processes look at the metadata files every 50 ms


class Cluster:
    """The two processes on one data directory, restarted on it when asked."""

    def __init__(self, data_dir: Path) -> None:
        self.data_dir = data_dir
        self._running = ExitStack()
        self.addresses = self._start()

    def _start(self) -> list[str]:
        _, addresses = self._running.enter_context(processes(self.data_dir, *SETTINGS))
        return addresses

    def restart(self) -> None:
        self._running.close()
        self.addresses = self._start()

    def stop(self) -> None:
        self._running.close()


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    running = Cluster(tmp_path_factory.mktemp("metadata") / "data")
    try:
        yield running
    finally:
        running.stop()


def request(address: str, api_key: int, version: int, body: dict[str, Any]) -> Any:
    with WireClient(address, timeout_s=10) as client:
        return client.request(api_key, version, body)


def topic_error(address: str) -> int:
    body = {"topics": [{"name": TOPIC}], "allow_auto_topic_creation": False}
    answer = request(address, METADATA, 8, body | {"include_topic_authorized_operations": False})
    return int(answer.topics[0].error_code)


def answered(addresses: list[str], error: int, what: str) -> None:
    """Every process answers a Metadata for TOPIC with `error` (its authorizer's verdict)."""
    wait_until(
        lambda: all(topic_error(address) == error for address in addresses),
        what,
        deadline_s=FOLLOWED_WITHIN_S,
    )


def acl(principal: str, name: str = TOPIC, permission: int = 2) -> dict[str, Any]:
    """CreateAcls v1's creation: `permission` (2 DENY, 3 ALLOW) of DESCRIBE on topic `name`."""
    return {
        "resource_type": 2,
        "resource_name": name,
        "resource_pattern_type": 3,
        "principal": principal,
        "host": "*",
        "operation": 8,
        "permission_type": permission,
    }


def acl_principals(address: str) -> set[str]:
    any_acl = {
        "resource_type_filter": 1,
        "resource_name_filter": None,
        "pattern_type_filter": 1,
        "principal_filter": None,
        "host_filter": None,
        "operation": 1,
        "permission_type": 1,
    }
    answer = request(address, DESCRIBE_ACLS, 1, any_acl)
    assert answer.error_code == ErrorCode.NONE
    return {entry.principal for resource in answer.resources for entry in resource.acls}


def quotas(address: str) -> dict[str, float]:
    """client id -> its producer_byte_rate, as `address` describes them."""
    components = [{"entity_type": "client-id", "match_type": 2, "match": None}]  # any specified
    answer = request(address, DESCRIBE_QUOTAS, 1, {"components": components, "strict": False})
    assert answer.error_code == ErrorCode.NONE
    return {
        entry.entity[0].entity_name: value.value
        for entry in answer.entries
        for value in entry.values
        if value.key == "producer_byte_rate"
    }


def alter_quota(address: str, client_id: str, rate: float) -> None:
    entity = [{"entity_type": "client-id", "entity_name": client_id}]
    ops = [{"key": "producer_byte_rate", "value": rate, "remove": False}]
    answer = request(
        address, ALTER_QUOTAS, 1, {"entries": [{"entity": entity, "ops": ops}], "validate_only": False}
    )
    assert [entry.error_code for entry in answer.entries] == [ErrorCode.NONE]


def scram_users(address: str) -> set[str]:
    answer = request(address, DESCRIBE_SCRAM, 0, {"users": None})
    assert answer.error_code == ErrorCode.NONE
    return {result.user for result in answer.results if result.credential_infos}


def finalized(address: str) -> tuple[dict[str, int], int]:
    answer = request(address, API_VERSIONS, 3, {"client_software_name": "t", "client_software_version": "1"})
    return {f.name: f.max_version_level for f in answer.finalized_features}, answer.finalized_features_epoch


def test_an_acl_made_through_one_process_is_enforced_by_the_other(cluster: Cluster) -> None:
    from confluent_kafka.admin import (
        AclBinding,
        AclBindingFilter,
        AclOperation,
        AclPermissionType,
        AdminClient,
        NewTopic,
        ResourcePatternType,
        ResourceType,
    )

    controller, other = cluster.addresses
    admin = AdminClient({"bootstrap.servers": controller})
    admin.create_topics([NewTopic(TOPIC, 2, 1)])[TOPIC].result(10)
    answered(cluster.addresses, ErrorCode.NONE, "the topic")
    deny = AclBinding(
        ResourceType.TOPIC,
        TOPIC,
        ResourcePatternType.LITERAL,
        "User:ANONYMOUS",
        "*",
        AclOperation.DESCRIBE,
        AclPermissionType.DENY,
    )
    for through in (controller, other):
        admin = AdminClient({"bootstrap.servers": through})
        admin.create_acls([deny])[deny].result(10)
        # Every process's authorizer refuses, each within a tick of the file's change.
        answered(cluster.addresses, ErrorCode.TOPIC_AUTHORIZATION_FAILED, f"the ACL made through {through}")
        gone = AclBindingFilter(
            ResourceType.TOPIC,
            TOPIC,
            ResourcePatternType.LITERAL,
            "User:ANONYMOUS",
            "*",
            AclOperation.ANY,
            AclPermissionType.ANY,
        )
        assert len(admin.delete_acls([gone])[gone].result(10)) == 1
        answered(cluster.addresses, ErrorCode.NONE, f"the ACL deleted through {through}")


def test_quotas_altered_through_one_process_are_described_by_the_other(cluster: Cluster) -> None:
    controller, other = cluster.addresses
    alter_quota(controller, "quota-a", 1024.0)
    assert quotas(other).get("quota-a") == 1024.0  # a Describe looks at the file first
    alter_quota(other, "quota-a", 2048.0)
    assert quotas(controller).get("quota-a") == 2048.0


def test_a_scram_credential_altered_through_one_process_is_described_by_the_other(cluster: Cluster) -> None:
    from confluent_kafka.admin import (
        AdminClient,
        ScramCredentialInfo,
        ScramMechanism,
        UserScramCredentialUpsertion,
    )

    for through, other in (cluster.addresses, cluster.addresses[::-1]):
        user = f"user-of-{through.rsplit(':', 1)[1]}"
        admin = AdminClient({"bootstrap.servers": through})
        info = ScramCredentialInfo(ScramMechanism.SCRAM_SHA_256, 4096)
        upsert = UserScramCredentialUpsertion(user, info, b"secret")
        admin.alter_user_scram_credentials([upsert])[user].result(10)
        assert user in scram_users(other)
        reader = AdminClient({"bootstrap.servers": other})
        described = reader.describe_user_scram_credentials([user])
        assert isinstance(described, dict)  # one future per user named
        assert described[user].result(10).scram_credential_infos[0].iterations == 4096


def test_features_updated_through_one_process_are_reported_alike_by_both(cluster: Cluster) -> None:
    from kafka.admin import KafkaAdminClient

    before, _ = finalized(cluster.addresses[0])
    assert before.get("transaction.version", 0) != 1
    admin = KafkaAdminClient(bootstrap_servers=",".join(cluster.addresses))
    try:
        answer = admin.update_features({"transaction.version": ("SAFE_DOWNGRADE", 1)})
    finally:
        admin.close()
    assert answer == {"transaction.version": "OK"}
    levels = [finalized(address) for address in cluster.addresses]
    assert levels[0] == levels[1] and levels[0][0]["transaction.version"] == 1


def test_changes_made_through_both_processes_at_once_are_all_kept(cluster: Cluster) -> None:
    count = 15

    def change(address: str, name: str) -> None:
        for n in range(count):
            answer = request(address, CREATE_ACLS, 1, {"creations": [acl(f"User:{name}-{n}", "many")]})
            assert answer.results[0].error_code == ErrorCode.NONE
            alter_quota(address, f"{name}-{n}", 100.0 + n)

    with ThreadPoolExecutor(2) as pool:
        changes = [pool.submit(change, a, f"p{position}") for position, a in enumerate(cluster.addresses)]
        for done in changes:
            done.result(30)
    wanted = {f"p{position}-{n}" for position in (0, 1) for n in range(count)}
    for address in cluster.addresses:
        assert {f"User:{name}" for name in wanted} <= acl_principals(address)
        assert wanted <= set(quotas(address))


def test_a_restart_keeps_the_metadata(cluster: Cluster) -> None:
    kept = [(acl_principals(a), quotas(a), scram_users(a), finalized(a)[0]) for a in cluster.addresses]
    assert kept[0] == kept[1] and kept[0][0] and kept[0][1] and kept[0][2]
    cluster.restart()
    for address in cluster.addresses:
        assert (
            acl_principals(address),
            quotas(address),
            scram_users(address),
            finalized(address)[0],
        ) == kept[0]
    # Only the controller's directory holds them: one copy of the cluster's metadata.
    assert not list((cluster.data_dir / "broker-1").glob("*.json.tmp"))
    assert not (cluster.data_dir / "broker-1" / "acls.json").exists()
    assert (cluster.data_dir / "broker-0" / "acls.json").exists()


SASL_HANDSHAKE, SASL_AUTHENTICATE = 17, 36
CREATE_TOKEN, EXPIRE_TOKEN, DESCRIBE_TOKENS = 38, 40, 41
ADMIN, ADMIN_PASSWORD = "admin", "admin-pw"


@pytest.fixture(scope="module")
def sasl_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[list[str]]:
    """The processes with one SASL_PLAINTEXT listener, --user admin and delegation tokens on."""
    argv = [sys.executable, "-m", "kafka_shim", "--brokers", "2", "--process-per-broker"]
    argv += ["--data-dir", str(tmp_path_factory.mktemp("sasl") / "data"), "--console", "off"]
    argv += ["--listeners", "CLIENT://127.0.0.1:0", "--log-level", "WARNING"]
    argv += ["--config", "listener.security.protocol.map=CLIENT:SASL_PLAINTEXT"]
    argv += ["--config", "delegation.token.secret.key=shared-secret"]
    argv += ["--user", f"{ADMIN}:{ADMIN_PASSWORD}"]
    broker = launch("shim", argv, timeout_s=60)
    try:
        line = next(line for line in broker.output if "listening on" in line)
        yield re.findall(r"(127\.0\.0\.1:\d+) \(broker \d\)", line)
    finally:
        broker.stop()


def logged_in(address: str, user: str, password: str) -> WireClient:
    """A wire client on `address` after a PLAIN login (SaslAuthenticate's error asserted NONE)."""
    client = WireClient(address, timeout_s=10)
    assert client.request(SASL_HANDSHAKE, 1, {"mechanism": "PLAIN"}).error_code == ErrorCode.NONE
    answer = client.request(SASL_AUTHENTICATE, 2, {"auth_bytes": f"\0{user}\0{password}".encode()})
    assert answer.error_code == ErrorCode.NONE, (address, user, answer.error_message)
    return client


def test_a_scram_user_made_through_one_process_logs_in_on_the_other(sasl_cluster: list[str]) -> None:
    from confluent_kafka.admin import (
        AdminClient,
        ScramCredentialInfo,
        ScramMechanism,
        UserScramCredentialUpsertion,
    )

    controller, other = sasl_cluster
    sasl: dict[str, str | int | float | bool] = {
        "security.protocol": "sasl_plaintext",
        "sasl.mechanism": "SCRAM-SHA-256",
    }
    admin = AdminClient(
        sasl | {"bootstrap.servers": controller, "sasl.username": ADMIN, "sasl.password": ADMIN_PASSWORD}
    )
    info = ScramCredentialInfo(ScramMechanism.SCRAM_SHA_256, 4096)
    upsert = UserScramCredentialUpsertion("bob", info, b"bob-pw")
    admin.alter_user_scram_credentials([upsert])["bob"].result(10)
    # bob's first login is on the other process (its SaslHandshake looks at the file first).
    bob = AdminClient(sasl | {"bootstrap.servers": other, "sasl.username": "bob", "sasl.password": "bob-pw"})
    assert bob.list_topics(timeout=10).brokers
    logged_in(other, "bob", "bob-pw").close()


def test_a_delegation_token_made_through_one_process_is_described_and_expired_by_the_other(
    sasl_cluster: list[str],
) -> None:
    controller, other = sasl_cluster
    with logged_in(controller, ADMIN, ADMIN_PASSWORD) as client:
        made = client.request(CREATE_TOKEN, 2, {"renewers": [], "max_lifetime_ms": -1})
    assert made.error_code == ErrorCode.NONE

    def described(address: str) -> list[str]:
        with logged_in(address, ADMIN, ADMIN_PASSWORD) as client:
            answer = client.request(DESCRIBE_TOKENS, 2, {"owners": None})
        assert answer.error_code == ErrorCode.NONE
        return [token.token_id for token in answer.tokens]

    assert made.token_id in described(other)
    with logged_in(other, ADMIN, ADMIN_PASSWORD) as client:
        expired = client.request(EXPIRE_TOKEN, 2, {"hmac": made.hmac, "expiry_time_period_ms": -1})
    assert expired.error_code == ErrorCode.NONE
    assert made.token_id not in described(controller)
