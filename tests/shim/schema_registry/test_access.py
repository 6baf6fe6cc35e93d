"""Who may do what to the registry, decided by Kafka ACLs under StandardAuthorizer, logged in
with HTTP Basic as a SASL user (shim.schema_registry.access): a subject's schemas are its
topic's, read with DESCRIBE (implied by READ and WRITE), registered with WRITE; the
registry-wide level with ALTER_CONFIGS on the cluster; listings hide what may not be read."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from confluent_kafka.schema_registry import Schema, SchemaRegistryClient
from confluent_kafka.schema_registry.error import SchemaRegistryError

from kafka_shim.protocol.settings.security import STANDARD_AUTHORIZER
from kafka_shim.shim.cli.main import build_parser, config_from_args
from kafka_shim.shim.security.authorizer import (
    AclBinding,
    AclOperation,
    PatternType,
    PermissionType,
    ResourceType,
)
from kafka_shim.shim.server import BrokerThread
from tests.helpers import wait_until

pytestmark = pytest.mark.clients

SCHEMA = Schema('{"type": "record", "name": "Order", "fields": [{"name": "id", "type": "long"}]}', "AVRO")


@pytest.fixture(scope="module")
def broker() -> Iterator[BrokerThread]:
    argv = ["--memory", "--listeners", "SASL_PLAINTEXT://127.0.0.1:0", "--schema-registry", "127.0.0.1:0"]
    argv += ["--user", "admin:admin-secret", "--user", "alice:alice-secret", "--user", "bob:bob-secret"]
    for pair in (
        "sasl.enabled.mechanisms=PLAIN",
        f"authorizer.class.name={STANDARD_AUTHORIZER}",
        "super.users=User:admin",
    ):
        argv += ["--config", pair]
    started = BrokerThread(config_from_args(build_parser().parse_args(argv))).start()
    wait_until(lambda: bool(started.server.schema_registry_urls), "the registry listening", deadline_s=30)
    authorizer = started.broker.authorizer
    assert authorizer is not None
    grants = [
        AclBinding(
            ResourceType.TOPIC,
            "orders",
            PatternType.LITERAL,
            "User:alice",
            "*",
            operation,
            PermissionType.ALLOW,
        )
        for operation in (AclOperation.WRITE,)
    ] + [
        AclBinding(
            ResourceType.TOPIC,
            "orders",
            PatternType.LITERAL,
            "User:bob",
            "*",
            AclOperation.READ,
            PermissionType.ALLOW,
        )
    ]
    assert started.call(lambda: authorizer.create(grants)) == [None, None]
    yield started
    started.stop()


def client(broker: BrokerThread, user: str | None) -> SchemaRegistryClient:
    conf = {"url": broker.server.schema_registry_urls[0]}
    if user is not None:
        conf["basic.auth.user.info"] = f"{user}:{user}-secret"
    return SchemaRegistryClient(conf)


def refusal(call: object) -> tuple[int, int]:
    assert callable(call)
    with pytest.raises(SchemaRegistryError) as refused:
        call()
    return refused.value.http_status_code, refused.value.error_code


def test_a_writer_registers_a_reader_reads_and_neither_sees_other_topics(broker: BrokerThread) -> None:
    admin, alice, bob = client(broker, "admin"), client(broker, "alice"), client(broker, "bob")
    secret_id = admin.register_schema("payroll-value", SCHEMA)
    assert alice.register_schema("orders-value", SCHEMA) == secret_id  # same schema, same id
    assert refusal(lambda: bob.register_schema("orders-value", SCHEMA)) == (403, 40301)
    assert bob.get_latest_version("orders-value").version == 1
    assert bob.get_subjects() == ["orders-value"]
    assert refusal(lambda: bob.get_latest_version("payroll-value")) == (403, 40301)
    assert refusal(lambda: alice.register_schema("payroll-value", SCHEMA)) == (403, 40301)
    assert sorted(admin.get_subjects()) == ["orders-value", "payroll-value"]


def test_the_registry_wide_level_needs_alter_configs_on_the_cluster(broker: BrokerThread) -> None:
    assert refusal(lambda: client(broker, "alice").set_compatibility(level="NONE")) == (403, 40301)
    admin = client(broker, "admin")
    admin.set_compatibility(level="FULL")
    assert admin.get_compatibility() == "FULL"
    admin.set_compatibility(level="BACKWARD")


def test_a_request_without_a_login_is_refused(broker: BrokerThread) -> None:
    assert refusal(lambda: client(broker, None).get_subjects())[0] == 401
