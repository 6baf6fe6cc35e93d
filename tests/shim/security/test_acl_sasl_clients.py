"""ACLs per user, as a real client meets them: SASL users on a SASL_PLAINTEXT listener with
the built-in authorizer. alice may write and read topic A and read group G; she gets Kafka's
authorization errors for topic B and group H, at once (librdkafka from the confluent-kafka
wheel; the ACLs are made by a super user through the admin API)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from confluent_kafka import Consumer, KafkaError, KafkaException, Producer
from confluent_kafka.admin import (
    AclBinding,
    AclOperation,
    AclPermissionType,
    AdminClient,
    NewTopic,
    ResourcePatternType,
    ResourceType,
)

from kafka_shim.protocol.settings.security import STANDARD_AUTHORIZER
from kafka_shim.shim.cli.main import build_parser, config_from_args
from kafka_shim.shim.server import BrokerThread

pytestmark = pytest.mark.clients


@pytest.fixture(scope="module")
def broker() -> Iterator[BrokerThread]:
    argv = ["--memory", "--listeners", "SASL_PLAINTEXT://127.0.0.1:0"]
    argv += ["--user", "alice:alice-pw", "--user", "admin:admin-pw"]
    argv += ["--config", f"authorizer.class.name={STANDARD_AUTHORIZER}", "--config", "super.users=User:admin"]
    started = BrokerThread(config_from_args(build_parser().parse_args(argv))).start()
    yield started
    started.stop()


def as_user(broker: BrokerThread, user: str, **extra: Any) -> dict[str, Any]:
    return {
        "bootstrap.servers": broker.bootstrap,
        "security.protocol": "sasl_plaintext",
        "sasl.mechanism": "SCRAM-SHA-256",
        "sasl.username": user,
        "sasl.password": f"{user}-pw",
        **extra,
    }


@pytest.fixture(scope="module")
def alice(broker: BrokerThread) -> dict[str, Any]:
    admin = AdminClient(as_user(broker, "admin"))
    for future in admin.create_topics([NewTopic("A", 1, 1), NewTopic("B", 1, 1)]).values():
        future.result(10)
    acls = [
        AclBinding(kind, name, ResourcePatternType.LITERAL, "User:alice", "*", op, AclPermissionType.ALLOW)
        for kind, name, op in (
            (ResourceType.TOPIC, "A", AclOperation.WRITE),
            (ResourceType.TOPIC, "A", AclOperation.READ),
            (ResourceType.GROUP, "G", AclOperation.READ),
        )
    ]
    for future in admin.create_acls(acls).values():
        future.result(10)
    return as_user(broker, "alice")


def delivery_errors(config: dict[str, Any], topic: str) -> list[int]:
    errors: list[int] = []
    producer = Producer({**config, "message.timeout.ms": 10_000})
    producer.produce(topic, b"v", on_delivery=lambda err, _: errors.append(err.code() if err else 0))
    producer.flush(15)
    return errors


def test_alice_writes_topic_a_and_is_refused_topic_b(alice: dict[str, Any]) -> None:
    assert delivery_errors(alice, "A") == [0]
    assert delivery_errors(alice, "B") == [KafkaError.TOPIC_AUTHORIZATION_FAILED]


def first_error(config: dict[str, Any], group: str) -> KafkaError | None:
    consumer = Consumer({**config, "group.id": group, "auto.offset.reset": "earliest"})
    consumer.subscribe(["A"])
    try:
        for _ in range(40):
            message = consumer.poll(0.5)
            if message is not None:
                return message.error()
        raise AssertionError(f"no message and no error for group {group} in 20 s")
    finally:
        consumer.close()


def test_alice_reads_with_group_g_and_is_refused_group_h(alice: dict[str, Any]) -> None:
    assert delivery_errors(alice, "A") == [0]
    assert first_error(alice, "G") is None  # a record of A
    refused = first_error(alice, "H")
    assert refused is not None and refused.code() == KafkaError.GROUP_AUTHORIZATION_FAILED


def test_alice_may_not_administer_acls(alice: dict[str, Any]) -> None:
    binding = AclBinding(
        ResourceType.TOPIC,
        "B",
        ResourcePatternType.LITERAL,
        "User:alice",
        "*",
        AclOperation.ALL,
        AclPermissionType.ALLOW,
    )
    admin = AdminClient(alice)  # held: a collected client cancels its futures
    with pytest.raises(KafkaException) as refused:
        admin.create_acls([binding])[binding].result(10)
    assert refused.value.args[0].code() == KafkaError.CLUSTER_AUTHORIZATION_FAILED
