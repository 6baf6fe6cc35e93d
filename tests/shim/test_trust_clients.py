"""What an ordinary authenticated user may not do, tried through a real client (librdkafka from
the confluent-kafka wheel) on a SASL listener with the built-in authorizer, ACLs as an
application's user gets them and allow.everyone.if.no.acl.found=false: bob may write, read and
describe every topic and read every group. He cannot replace admin's SCRAM credential, list
the users, or append a forged commit to __consumer_offsets; after a restart of the broker
(on disk) the group's offset and admin's password are as they were."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import Consumer, KafkaError, Producer, TopicPartition
from confluent_kafka.admin import (
    AclBinding,
    AclOperation,
    AclPermissionType,
    AdminClient,
    NewTopic,
    ResourcePatternType,
    ResourceType,
)
from kafka.admin import KafkaAdminClient, UserScramCredentialUpsertion
from kafka.admin import ScramMechanism as KafkaScram
from kafka.errors import ClusterAuthorizationFailedError

from kafka_shim.protocol.offsets_records import OffsetKey, OffsetsRecord, OffsetValue, encode_record
from kafka_shim.protocol.settings.security import STANDARD_AUTHORIZER
from kafka_shim.shim.cli.main import build_parser, config_from_args
from kafka_shim.shim.server import BrokerThread

pytestmark = pytest.mark.clients

TOPIC, GROUP = "orders", "billing"


def start(data_dir: Path) -> BrokerThread:
    argv = ["--data-dir", str(data_dir), "--listeners", "SASL_PLAINTEXT://127.0.0.1:0"]
    argv += ["--user", "admin:admin-pw", "--user", "bob:bob-pw"]
    argv += ["--config", f"authorizer.class.name={STANDARD_AUTHORIZER}", "--config", "super.users=User:admin"]
    argv += ["--config", "allow.everyone.if.no.acl.found=false", "--initial-rebalance-delay-ms", "0"]
    return BrokerThread(config_from_args(build_parser().parse_args(argv))).start()


def stop(broker: BrokerThread) -> None:
    broker.stop()
    broker.broker.close()  # flush and unlock the data directory for the restart


def as_user(broker: BrokerThread, user: str, **extra: Any) -> dict[str, Any]:
    return {
        "bootstrap.servers": broker.bootstrap,
        "security.protocol": "sasl_plaintext",
        "sasl.mechanism": "SCRAM-SHA-256",
        "sasl.username": user,
        "sasl.password": f"{user}-pw",
        **extra,
    }


def prepared(tmp_path: Path) -> BrokerThread:
    """A broker where admin made topic `orders`, granted bob an application's ACLs, and bob
    committed offset 5 for group `billing`."""
    started = start(tmp_path)
    admin = AdminClient(as_user(started, "admin"))
    admin.create_topics([NewTopic(TOPIC, 1, 1)])[TOPIC].result(10)
    grants = [
        AclBinding(kind, "*", ResourcePatternType.LITERAL, "User:bob", "*", op, AclPermissionType.ALLOW)
        for kind, op in (
            (ResourceType.TOPIC, AclOperation.WRITE),
            (ResourceType.TOPIC, AclOperation.READ),
            (ResourceType.TOPIC, AclOperation.DESCRIBE),
            (ResourceType.GROUP, AclOperation.READ),
        )
    ]
    for future in admin.create_acls(grants).values():
        future.result(10)
    assert committed(started, "bob", commit=5) == 5
    return started


def committed(broker: BrokerThread, user: str, commit: int | None = None) -> int:
    consumer = Consumer(as_user(broker, user, **{"group.id": GROUP, "enable.auto.commit": False}))
    try:
        if commit is not None:
            consumer.commit(offsets=[TopicPartition(TOPIC, 0, commit)], asynchronous=False)
        [found] = consumer.committed([TopicPartition(TOPIC, 0)], timeout=10)
        return int(found.offset)
    finally:
        consumer.close()


def scram_admin(broker: BrokerThread, user: str) -> KafkaAdminClient:
    """kafka-python's admin client: librdkafka 2.16 corrupts its heap on a refused
    DescribeUserScramCredentials (munmap_chunk: invalid pointer), whatever the message."""
    return KafkaAdminClient(
        bootstrap_servers=broker.bootstrap,
        security_protocol="SASL_PLAINTEXT",
        sasl_mechanism="SCRAM-SHA-256",
        sasl_plain_username=user,
        sasl_plain_password=f"{user}-pw",
        request_timeout_ms=10_000,
    )


def test_bob_cannot_replace_admins_credential_nor_list_the_users(tmp_path: Path) -> None:
    broker = prepared(tmp_path)
    try:
        bob = scram_admin(broker, "bob")
        takeover = UserScramCredentialUpsertion("admin", KafkaScram.SCRAM_SHA_256, "bob-knows-this")
        assert bob.alter_user_scram_credentials([takeover]) == {
            "admin": "Request AlterUserScramCredentials is not authorized."
        }
        with pytest.raises(ClusterAuthorizationFailedError):
            bob.describe_user_scram_credentials()
        bob.close()
    finally:
        stop(broker)
    restarted = start(tmp_path)
    try:
        admin = scram_admin(restarted, "admin")  # admin-pw still logs in, after the restart
        described = admin.describe_user_scram_credentials()
        assert sorted(described) == ["admin", "bob"]
        admin.close()
    finally:
        stop(restarted)


def test_bob_cannot_append_a_forged_commit_to_the_offsets_topic(tmp_path: Path) -> None:
    broker = prepared(tmp_path)
    try:
        forged = OffsetsRecord(OffsetKey(GROUP, TOPIC, 0), OffsetValue(999, -1, "", 0))
        key, value = encode_record(forged)
        errors: list[int] = []
        producer = Producer(as_user(broker, "bob", **{"message.timeout.ms": 10_000}))
        producer.produce(
            "__consumer_offsets",
            value,
            key,
            on_delivery=lambda err, _: errors.append(err.code() if err else 0),
        )
        producer.flush(15)
        assert errors == [KafkaError.TOPIC_EXCEPTION]  # Kafka's INVALID_TOPIC_EXCEPTION, 17
    finally:
        stop(broker)
    restarted = start(tmp_path)
    try:
        assert committed(restarted, "bob") == 5
    finally:
        stop(restarted)
