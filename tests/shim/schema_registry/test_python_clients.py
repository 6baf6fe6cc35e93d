"""The registry against confluent-kafka Python's SchemaRegistryClient and its serializers:
Avro, Protobuf and JSON Schema records produced and consumed through the broker, schema
evolution accepted and refused per compatibility level, and the schemas surviving a restart
of a broker that keeps its topics on disk."""

from __future__ import annotations

import base64
import json
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import Consumer, Producer
from confluent_kafka.schema_registry import Schema, SchemaRegistryClient
from confluent_kafka.schema_registry.avro import AvroDeserializer, AvroSerializer
from confluent_kafka.schema_registry.error import SchemaRegistryError
from confluent_kafka.schema_registry.json_schema import JSONDeserializer, JSONSerializer
from confluent_kafka.schema_registry.protobuf import ProtobufDeserializer, ProtobufSerializer
from confluent_kafka.serialization import MessageField, SerializationContext
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory, timestamp_pb2

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


def order_class(with_note: bool = False) -> Any:
    """A message class as protoc's Python output builds it, from a FileDescriptorProto (no
    protoc here): shop.Order with a timestamp (a well-known type, imported)."""
    file = descriptor_pb2.FileDescriptorProto(name="shop/order.proto", package="shop", syntax="proto3")
    file.dependency.append("google/protobuf/timestamp.proto")
    order = file.message_type.add(name="Order")
    field = descriptor_pb2.FieldDescriptorProto
    order.field.add(name="id", number=1, type=field.TYPE_INT64, label=field.LABEL_OPTIONAL)
    order.field.add(name="item", number=2, type=field.TYPE_STRING, label=field.LABEL_OPTIONAL)
    order.field.add(
        name="at",
        number=3,
        type=field.TYPE_MESSAGE,
        type_name=".google.protobuf.Timestamp",
        label=field.LABEL_OPTIONAL,
    )
    if with_note:
        order.field.add(name="note", number=4, type=field.TYPE_STRING, label=field.LABEL_OPTIONAL)
    pool = descriptor_pool.DescriptorPool()
    known = descriptor_pb2.FileDescriptorProto()
    timestamp_pb2.DESCRIPTOR.CopyToProto(known)
    pool.Add(known)
    pool.Add(file)
    return message_factory.GetMessageClass(pool.FindMessageTypeByName("shop.Order"))


def test_protobuf_records_round_trip_and_evolve(kafka_shim: KafkaShim) -> None:
    client = SchemaRegistryClient({"url": kafka_shim.schema_registry_url})
    order = order_class()
    serializer = ProtobufSerializer(order, client, {"use.deprecated.format": False})
    sent = [order(id=1, item="tea"), order(id=2, item="cake")]
    sent[1].at.FromSeconds(1_700_000_000)
    produce(kafka_shim, "orders", sent, serializer)
    deserializer = ProtobufDeserializer(order, {"use.deprecated.format": False}, client)
    assert consume(kafka_shim, "orders", 2, deserializer) == sent
    registered = client.get_latest_version("orders-value")
    assert registered.schema.schema_type == "PROTOBUF"
    # Stored as Confluent stores it: the base64 descriptor the client sent, as a .proto file.
    assert "message Order {" in (registered.schema.schema_str or "")
    # A field added is compatible; a field's type changed between wire kinds is not.
    assert (
        client.register_schema("orders-value", Schema(_file_of(order_class(with_note=True)), "PROTOBUF")) == 2
    )
    text = 'syntax = "proto3"; package shop; message Order { string id = 1; string item = 2; }'
    with pytest.raises(SchemaRegistryError) as refused:
        client.register_schema("orders-value", Schema(text, "PROTOBUF"))
    assert refused.value.http_status_code == 409
    assert "FIELD_SCALAR_KIND_CHANGED" in refused.value.error_message


def _file_of(message_class: Any) -> str:
    """The base64 FileDescriptorProto confluent-kafka registers for a message class."""
    return base64.b64encode(message_class.DESCRIPTOR.file.serialized_pb).decode()


PERSON_PROPERTIES: dict[str, Any] = {"name": {"type": "string"}, "age": {"type": "integer"}}
PERSON: dict[str, Any] = {"type": "object", "properties": PERSON_PROPERTIES, "required": ["name"]}


def test_json_schema_records_round_trip_and_evolve(kafka_shim: KafkaShim) -> None:
    client = SchemaRegistryClient({"url": kafka_shim.schema_registry_url})
    schema = json.dumps(PERSON)
    people = [{"name": "ada", "age": 36}, {"name": "alan"}]
    produce(kafka_shim, "people", people, JSONSerializer(schema, client))
    assert consume(kafka_shim, "people", 2, JSONDeserializer(schema, schema_registry_client=client)) == people
    # Widening age to number is backward compatible; requiring it is not.
    widened = {**PERSON, "properties": {**PERSON_PROPERTIES, "age": {"type": "number"}}}
    assert client.register_schema("people-value", Schema(json.dumps(widened), "JSON")) == 2
    with pytest.raises(SchemaRegistryError) as refused:
        client.register_schema(
            "people-value", Schema(json.dumps({**widened, "required": ["name", "age"]}), "JSON")
        )
    assert "REQUIRED_ATTRIBUTE_ADDED" in refused.value.error_message
    with pytest.raises(SchemaRegistryError) as invalid:
        client.register_schema("people-value", Schema('{"type": 12}', "JSON"))
    assert (invalid.value.http_status_code, invalid.value.error_code) == (422, 42201)
