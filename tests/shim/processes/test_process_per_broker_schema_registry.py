"""The schema registry of `--brokers 2 --process-per-broker`: served by the controller's process
on the address one process uses, its `_schemas` topic led there; confluent-kafka's
SchemaRegistryClient registers, reads back and is refused as with one process, an Avro producer
and consumer go through it across both processes' partitions, the cluster console shows its
subjects, an ACL made through the other process guards it, and a restart keeps it all."""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import Consumer, Producer
from confluent_kafka.admin import AdminClient, NewTopic
from confluent_kafka.schema_registry import Schema, SchemaRegistryClient
from confluent_kafka.schema_registry.avro import AvroDeserializer, AvroSerializer
from confluent_kafka.schema_registry.error import SchemaRegistryError
from confluent_kafka.serialization import MessageField, SerializationContext

from compat.targets import free_port
from kafka_shim.protocol.settings.security import STANDARD_AUTHORIZER
from tests.helpers import wait_until
from tests.shim.processes.test_process_per_broker_clients import processes

pytestmark = pytest.mark.clients

USER_V1 = """{"type": "record", "name": "User", "namespace": "shop",
 "fields": [{"name": "name", "type": "string"}, {"name": "age", "type": "int"}]}"""
# A new field without a default: a reader of it cannot read v1 data (BACKWARD refuses it).
USER_NO_DEFAULT = """{"type": "record", "name": "User", "namespace": "shop",
 "fields": [{"name": "name", "type": "string"}, {"name": "age", "type": "int"},
            {"name": "phone", "type": "string"}]}"""


@contextmanager
def registry_cluster(data_dir: Path, console: str = "off", *extra: str) -> Iterator[tuple[str, str]]:
    """The processes with the registry on a free port: (bootstrap servers, registry URL)."""
    port = free_port()
    with processes(data_dir, "--console", console, "--schema-registry", f"127.0.0.1:{port}", *extra) as (
        broker,
        addresses,
    ):
        if console != "off":  # the supervisor's console serves once every process does
            deadline = time.monotonic() + 30
            while not any("console on" in line for line in broker.output):
                assert time.monotonic() < deadline, "\n".join(broker.output[-20:])
                time.sleep(0.05)
        yield ",".join(addresses), f"http://127.0.0.1:{port}"


@pytest.fixture(scope="module")
def console() -> str:
    return f"127.0.0.1:{free_port()}"


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory, console: str) -> Iterator[tuple[str, str]]:
    with registry_cluster(tmp_path_factory.mktemp("registry") / "data", console) as started:
        yield started


def read_json(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=10) as answer:
        return json.loads(answer.read())


def test_register_read_back_and_refuse(cluster: tuple[str, str], console: str) -> None:
    bootstrap, url = cluster
    client = SchemaRegistryClient({"url": url})
    subject = f"users-{uuid.uuid4().hex[:6]}-value"
    schema_id = client.register_schema(subject, Schema(USER_V1, "AVRO"))
    assert SchemaRegistryClient({"url": url}).get_schema(schema_id).schema_str == USER_V1
    latest = SchemaRegistryClient({"url": url}).get_latest_version(subject)
    assert (latest.version, latest.schema_id, latest.schema.schema_str) == (1, schema_id, USER_V1)
    with pytest.raises(SchemaRegistryError) as refused:
        client.register_schema(subject, Schema(USER_NO_DEFAULT, "AVRO"))
    assert (refused.value.http_status_code, refused.value.error_code) == (409, 409)
    # The registry's topic is led by the process serving it: its reads and writes stay local.
    topics = AdminClient({"bootstrap.servers": bootstrap}).list_topics("_schemas", timeout=10).topics
    assert topics["_schemas"].partitions[0].leader == 0
    # The cluster console's Schemas page, asked of that process over its private socket.
    rows = read_json(f"http://{console}/console/api/subjects")
    assert {(row["subject"], row["latest_id"]) for row in rows} >= {(subject, schema_id)}
    page = read_json(f"http://{console}/console/api/subjects/{subject}")
    assert [(v["version"], v["id"]) for v in page["versions"]] == [(1, schema_id)]
    with pytest.raises(urllib.error.HTTPError) as missing:
        read_json(f"http://{console}/console/api/subjects/no-such-subject")
    assert missing.value.code == 404


def test_avro_through_the_registry_across_both_processes(cluster: tuple[str, str]) -> None:
    bootstrap, url = cluster
    topic = f"people-{uuid.uuid4().hex[:6]}"
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(topic, 2, 2)])[topic].result(10)
    leaders = {p.id: p.leader for p in admin.list_topics(topic, timeout=10).topics[topic].partitions.values()}
    assert sorted(leaders.values()) == [0, 1]  # one partition in each process

    client = SchemaRegistryClient({"url": url})
    serialize = AvroSerializer(client, USER_V1)
    users = [{"name": f"u{i}", "age": i} for i in range(20)]
    producer = Producer({"bootstrap.servers": bootstrap})
    for i, user in enumerate(users):
        value = serialize(user, SerializationContext(topic, MessageField.VALUE))
        producer.produce(topic, value=value, partition=i % 2)
    assert producer.flush(10) == 0

    deserialize = AvroDeserializer(SchemaRegistryClient({"url": url}))
    consumer = Consumer(
        {"bootstrap.servers": bootstrap, "group.id": f"g-{topic}", "auto.offset.reset": "earliest"}
    )
    consumer.subscribe([topic])
    found: dict[int, list[Any]] = {0: [], 1: []}
    try:
        for _ in range(150):
            if sum(map(len, found.values())) == len(users):
                break
            message = consumer.poll(0.2)
            if message is None or message.error() is not None:
                continue
            context = SerializationContext(topic, MessageField.VALUE)
            found[message.partition() or 0].append(deserialize(message.value() or b"", context))
    finally:
        consumer.close()
    assert found == {0: users[0::2], 1: users[1::2]}


def denied(url: str, subject: str) -> bool:
    """Whether the registry refuses reading `subject` with Confluent's 40301."""
    try:
        read_json(f"{url}/subjects/{subject}/versions/latest")
    except urllib.error.HTTPError as refused:
        return refused.code == 403 and json.loads(refused.read())["error_code"] == 40301
    return False


def test_an_acl_made_through_the_other_process_guards_the_registry_and_a_restart_keeps_all(
    tmp_path: Path,
) -> None:
    from confluent_kafka.admin import AclBinding, AclOperation, AclPermissionType, ResourcePatternType
    from confluent_kafka.admin import ResourceType as Resource

    secured = ["--config", f"authorizer.class.name={STANDARD_AUTHORIZER}"]
    secured += ["--config", "allow.everyone.if.no.acl.found=true"]
    with registry_cluster(tmp_path / "data", "off", *secured) as (bootstrap, url):
        client = SchemaRegistryClient({"url": url})
        schema_id = client.register_schema("users-value", Schema(USER_V1, "AVRO"))
        assert client.register_schema("orders-value", Schema(USER_V1, "AVRO")) == schema_id
        # Made through broker 1; the registry runs in broker 0's process.
        admin = AdminClient({"bootstrap.servers": bootstrap.split(",")[1]})
        deny = AclBinding(
            Resource.TOPIC,
            "orders",
            ResourcePatternType.LITERAL,
            "User:ANONYMOUS",
            "*",
            AclOperation.DESCRIBE,
            AclPermissionType.DENY,
        )
        admin.create_acls([deny])[deny].result(10)
        wait_until(
            lambda: denied(url, "orders-value"),
            "the ACL made through broker 1 reaches the registry",
            deadline_s=5,
        )
    with registry_cluster(tmp_path / "data", "off", *secured) as (_, url):
        client = SchemaRegistryClient({"url": url})
        assert client.get_schema(schema_id).schema_str == USER_V1
        assert client.get_latest_version("users-value").schema_id == schema_id
        # Compatibility still checked against what was registered before the restart.
        with pytest.raises(SchemaRegistryError) as refused:
            client.register_schema("users-value", Schema(USER_NO_DEFAULT, "AVRO"))
        assert refused.value.http_status_code == 409
        assert denied(url, "orders-value")
