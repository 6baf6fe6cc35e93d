"""The registry against confluent-kafka Python's SchemaRegistryClient and its serializers:
Avro, Protobuf and JSON Schema records produced and consumed through the broker, schema
evolution accepted and refused per compatibility level, and the schemas surviving a restart
of a broker that keeps its topics on disk."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import Consumer, Producer
from confluent_kafka.schema_registry import Schema, SchemaRegistryClient
from confluent_kafka.schema_registry.avro import AvroDeserializer, AvroSerializer
from confluent_kafka.schema_registry.error import SchemaRegistryError
from confluent_kafka.serialization import MessageField, SerializationContext

from kafka_shim.pytest_plugin import KafkaShim

pytestmark = pytest.mark.clients

USER_V1 = """{"type": "record", "name": "User", "namespace": "shop",
 "fields": [{"name": "name", "type": "string"}, {"name": "age", "type": "int"}]}"""
# v2 adds a field with a default: BACKWARD compatible (a v2 reader fills it in for v1 data).
USER_V2 = """{"type": "record", "name": "User", "namespace": "shop",
 "fields": [{"name": "name", "type": "string"}, {"name": "age", "type": "int"},
            {"name": "email", "type": "string", "default": ""}]}"""
# v3 adds a field without a default: a v3 reader cannot read v1/v2 data.
USER_V3 = """{"type": "record", "name": "User", "namespace": "shop",
 "fields": [{"name": "name", "type": "string"}, {"name": "age", "type": "int"},
            {"name": "email", "type": "string", "default": ""}, {"name": "phone", "type": "string"}]}"""


def produce(
    shim: KafkaShim, topic: str, values: list[Any], serialize: Callable[[Any, SerializationContext], bytes]
) -> None:
    producer = Producer({"bootstrap.servers": shim.bootstrap})
    for value in values:
        producer.produce(topic, value=serialize(value, SerializationContext(topic, MessageField.VALUE)))
    assert producer.flush(10) == 0


def consume(
    shim: KafkaShim, topic: str, count: int, deserialize: Callable[[bytes, SerializationContext], Any]
) -> list[Any]:
    consumer = Consumer(
        {
            "bootstrap.servers": shim.bootstrap,
            "group.id": f"g-{uuid.uuid4()}",
            "auto.offset.reset": "earliest",
        }
    )
    consumer.subscribe([topic])
    found: list[Any] = []
    try:
        for _ in range(100):
            if len(found) == count:
                break
            message = consumer.poll(0.2)
            if message is None or message.error() is not None:
                continue
            found.append(deserialize(message.value() or b"", SerializationContext(topic, MessageField.VALUE)))
    finally:
        consumer.close()
    return found


def test_avro_records_round_trip_through_the_broker_and_the_registry(kafka_shim: KafkaShim) -> None:
    client = SchemaRegistryClient({"url": kafka_shim.schema_registry_url})
    serializer = AvroSerializer(client, USER_V1)
    users = [{"name": "ada", "age": 36}, {"name": "alan", "age": 41}]
    produce(kafka_shim, "users", users, serializer)
    assert consume(kafka_shim, "users", 2, AvroDeserializer(client)) == users
    latest = client.get_latest_version("users-value")
    assert (latest.version, latest.schema_id) == (1, 1)
    assert client.get_subjects() == ["users-value"]
    # Registering the same schema again gives the same id, under another subject too.
    assert client.register_schema("users-value", Schema(USER_V1, "AVRO")) == 1
    assert client.register_schema("people-value", Schema(USER_V1, "AVRO")) == 1
    assert sorted(client.get_subjects()) == ["people-value", "users-value"]


def test_evolution_is_accepted_and_refused_per_compatibility_level(kafka_shim: KafkaShim) -> None:
    client = SchemaRegistryClient({"url": kafka_shim.schema_registry_url})
    assert client.register_schema("users-value", Schema(USER_V1, "AVRO")) == 1
    assert client.register_schema("users-value", Schema(USER_V2, "AVRO")) == 2  # BACKWARD: a default
    with pytest.raises(SchemaRegistryError) as refused:
        client.register_schema("users-value", Schema(USER_V3, "AVRO"))
    assert (refused.value.http_status_code, refused.value.error_code) == (409, 409)
    assert "phone" in refused.value.error_message
    assert not client.test_compatibility("users-value", Schema(USER_V3, "AVRO"))
    # FORWARD: the old schema must read the new one's data, which v3 (more fields) allows.
    client.set_compatibility("users-value", "FORWARD")
    assert client.get_compatibility("users-value") == "FORWARD"
    assert client.register_schema("users-value", Schema(USER_V3, "AVRO")) == 3
    # NONE: anything goes, even a type change of a field.
    client.set_compatibility("users-value", "NONE")
    retyped = USER_V1.replace('"type": "int"', '"type": "string"')
    assert client.register_schema("users-value", Schema(retyped, "AVRO")) == 4
    assert client.get_versions("users-value") == [1, 2, 3, 4]


def test_schemas_survive_a_restart_of_a_disk_broker(
    kafka_shim_factory: Callable[..., KafkaShim], tmp_path: Path
) -> None:
    first = kafka_shim_factory(data_dir=tmp_path)
    client = SchemaRegistryClient({"url": first.schema_registry_url})
    produce(first, "users", [{"name": "ada", "age": 36}], AvroSerializer(client, USER_V1))
    client.set_compatibility("users-value", "FULL")
    first.stop()
    first.broker.close()  # releases the data directory for the next start
    second = kafka_shim_factory(data_dir=tmp_path)
    fresh = SchemaRegistryClient({"url": second.schema_registry_url})
    assert consume(second, "users", 1, AvroDeserializer(fresh)) == [{"name": "ada", "age": 36}]
    assert fresh.get_compatibility("users-value") == "FULL"
    assert fresh.register_schema("users-value", Schema(USER_V2, "AVRO")) == 2  # ids go on from 1
