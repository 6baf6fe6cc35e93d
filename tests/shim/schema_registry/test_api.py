"""Confluent Schema Registry's REST API as its clients see it, over HTTP: answers, Confluent's
error codes, deletes, references, modes, levels, and the `_schemas` topic in Confluent's own
key and value JSON, both written and read."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from typing import Any

import pytest
import requests
from confluent_kafka import Consumer, Producer

from kafka_shim.pytest_plugin import KafkaShim
from kafka_shim.shim.config.broker_config import BrokerConfig
from kafka_shim.shim.server import BrokerThread
from tests.helpers import wait_until

MEDIA = "application/vnd.schemaregistry.v1+json"
ORDER = json.dumps({"type": "record", "name": "Order", "fields": [{"name": "id", "type": "long"}]})
ADDRESS = json.dumps(
    {"type": "record", "name": "Address", "namespace": "shop", "fields": [{"name": "city", "type": "string"}]}
)
CUSTOMER = json.dumps(
    {
        "type": "record",
        "name": "Customer",
        "namespace": "shop",
        "fields": [{"name": "name", "type": "string"}, {"name": "home", "type": "shop.Address"}],
    }
)


class Registry:
    def __init__(self, url: str) -> None:
        self.url = url

    def call(self, method: str, path: str, body: Any = None, media: str = MEDIA) -> tuple[int, Any]:
        data = None if body is None else json.dumps(body)
        headers = {"Content-Type": media} if data is not None else {}
        answer = requests.request(method, f"{self.url}{path}", data=data, headers=headers, timeout=10)
        try:
            return answer.status_code, answer.json()
        except ValueError:
            return answer.status_code, answer.text

    def error(self, method: str, path: str, body: Any = None) -> tuple[int, int]:
        status, answer = self.call(method, path, body)
        return status, answer["error_code"]


@pytest.fixture(scope="module")
def shared() -> Iterator[Registry]:
    """One broker for the tests that use subjects of their own and leave the rest as it was."""
    thread = BrokerThread(BrokerConfig(port=0, schema_registry_listener="127.0.0.1:0")).start()
    wait_until(lambda: bool(thread.server.schema_registry_urls), "the registry listening", deadline_s=30)
    yield Registry(thread.server.schema_registry_urls[0])
    thread.stop()


@pytest.fixture
def registry(kafka_shim: KafkaShim) -> Registry:
    return Registry(kafka_shim.schema_registry_url)


@pytest.mark.parametrize(
    ("method", "path", "body", "expected"),
    [
        ("GET", "/subjects/nope/versions", None, (404, 40401)),
        ("GET", "/subjects/nope/versions/latest", None, (404, 40401)),
        ("GET", "/subjects/orders-value/versions/7", None, (404, 40402)),
        ("GET", "/subjects/orders-value/versions/abc", None, (422, 42202)),
        ("GET", "/subjects/orders-value/versions/0", None, (422, 42202)),
        ("GET", "/schemas/ids/999", None, (404, 40403)),
        ("POST", "/subjects/orders-value/versions", {"schema": "{not json"}, (422, 42201)),
        ("POST", "/subjects/orders-value/versions", {"schema": '{"type": "nonsense"}'}, (422, 42201)),
        ("POST", "/subjects/orders-value/versions", {"schema": ORDER, "schemaType": "XML"}, (422, 422)),
        ("POST", "/subjects/orders-value", {"schema": '"string"'}, (404, 40403)),
        ("PUT", "/config/orders-value", {"compatibility": "SIDEWAYS"}, (422, 42203)),
        ("GET", "/config/orders-value", None, (404, 40408)),
        ("PUT", "/mode", {"mode": "SOMETIMES"}, (422, 42204)),
        ("DELETE", "/subjects/orders-value/versions/1?permanent=true", None, (404, 40407)),
        ("GET", "/no/such/route", None, (404, 404)),
    ],
)
def test_refusals_carry_confluents_codes(
    shared: Registry, method: str, path: str, body: Any, expected: tuple[int, int]
) -> None:
    assert shared.call("POST", "/subjects/orders-value/versions", {"schema": ORDER})[0] == 200
    assert shared.error(method, path, body) == expected


def test_answers_and_media_type(registry: Registry) -> None:
    answer = requests.get(f"{registry.url}/schemas/types", timeout=10)
    assert answer.headers["content-type"] == MEDIA
    assert answer.json() == ["JSON", "PROTOBUF", "AVRO"]
    assert registry.call("POST", "/subjects/orders-value/versions", {"schema": ORDER}) == (200, {"id": 1})
    status, version = registry.call("GET", "/subjects/orders-value/versions/1")
    assert version == {"subject": "orders-value", "version": 1, "id": 1, "schema": ORDER}
    assert registry.call("GET", "/subjects/orders-value/versions/latest/schema")[1] == json.loads(ORDER)
    assert registry.call("GET", "/schemas/ids/1") == (200, {"schema": ORDER})
    assert registry.call("GET", "/schemas/ids/1?fetchMaxId=true") == (200, {"schema": ORDER, "maxId": 1})
    assert registry.call("GET", "/schemas/ids/1/versions") == (
        200,
        [{"subject": "orders-value", "version": 1}],
    )
    assert registry.call("POST", "/subjects/orders-value", {"schema": ORDER})[1]["version"] == 1
    status, checked = registry.call(
        "POST",
        "/compatibility/subjects/orders-value/versions/latest?verbose=true",
        {"schema": CUSTOMER_PLAIN},
    )
    assert status == 200 and checked["is_compatible"] is False and checked["messages"]
    assert registry.call("GET", "/config") == (200, {"compatibilityLevel": "BACKWARD"})
    assert registry.call("GET", "/config/orders-value?defaultToGlobal=true")[1] == {
        "compatibilityLevel": "BACKWARD"
    }
    assert registry.call("POST", "/subjects/x/versions", {"schema": ORDER}, media="text/plain")[0] == 415


CUSTOMER_PLAIN = json.dumps(
    {
        "type": "record",
        "name": "Order",
        "fields": [{"name": "id", "type": "long"}, {"name": "x", "type": "int"}],
    }
)


def test_soft_then_hard_deletes(shared: Registry) -> None:
    registry = shared
    for n in range(2):
        schema = json.dumps({"type": "enum", "name": "E", "symbols": ["A", "B", "C"][: n + 2]})
        registry.call("PUT", "/config/e-value", {"compatibility": "NONE"})
        assert registry.call("POST", "/subjects/e-value/versions", {"schema": schema})[0] == 200
    assert registry.call("DELETE", "/subjects/e-value/versions/1") == (200, 1)
    assert registry.error("GET", "/subjects/e-value/versions/1") == (404, 40402)
    assert registry.call("GET", "/subjects/e-value/versions/1?deleted=true")[1]["version"] == 1
    assert registry.call("GET", "/subjects/e-value/versions") == (200, [2])
    assert registry.call("GET", "/subjects/e-value/versions?deleted=true") == (200, [1, 2])
    assert registry.error("DELETE", "/subjects/e-value/versions/1") == (404, 40406)
    assert registry.call("DELETE", "/subjects/e-value/versions/1?permanent=true") == (200, 1)
    assert registry.error("DELETE", "/subjects/e-value?permanent=true") == (404, 40405)
    assert registry.call("DELETE", "/subjects/e-value") == (200, [2])
    assert registry.error("DELETE", "/subjects/e-value") == (404, 40404)
    assert "e-value" not in registry.call("GET", "/subjects")[1]
    assert "e-value" in registry.call("GET", "/subjects?deleted=true")[1]
    assert registry.call("DELETE", "/subjects/e-value?permanent=true") == (200, [2])
    assert "e-value" not in registry.call("GET", "/subjects?deleted=true")[1]


def test_references_resolve_and_hold_what_they_reference(registry: Registry) -> None:
    assert registry.call("POST", "/subjects/address/versions", {"schema": ADDRESS}) == (200, {"id": 1})
    reference = {"name": "shop.Address", "subject": "address", "version": 1}
    body = {"schema": CUSTOMER, "references": [reference]}
    assert registry.call("POST", "/subjects/customer-value/versions", body) == (200, {"id": 2})
    assert registry.call("GET", "/subjects/customer-value/versions/1")[1]["references"] == [reference]
    assert registry.call("GET", "/subjects/address/versions/1/referencedby") == (200, [2])
    assert registry.error("DELETE", "/subjects/address/versions/1") == (422, 42206)
    missing = {"schema": CUSTOMER, "references": [{**reference, "version": 9}]}
    assert registry.error("POST", "/subjects/other-value/versions", missing) == (422, 42201)
    assert registry.error("POST", "/subjects/other-value/versions", {"schema": CUSTOMER}) == (422, 42201)


def test_modes(registry: Registry) -> None:
    assert registry.call("POST", "/subjects/orders-value/versions", {"schema": ORDER}) == (200, {"id": 1})
    assert registry.call("PUT", "/mode", {"mode": "READONLY"}) == (200, {"mode": "READONLY"})
    assert registry.error("POST", "/subjects/orders-value/versions", {"schema": ADDRESS}) == (422, 42205)
    assert registry.call("PUT", "/mode", {"mode": "READWRITE"}) == (200, {"mode": "READWRITE"})
    assert registry.error("PUT", "/mode", {"mode": "IMPORT"}) == (422, 42205)  # not empty
    assert registry.call("PUT", "/mode/imported-value", {"mode": "IMPORT"}) == (200, {"mode": "IMPORT"})
    body = {"schema": ADDRESS, "id": 100, "version": 3}
    assert registry.call("POST", "/subjects/imported-value/versions", body) == (200, {"id": 100})
    assert registry.call("GET", "/subjects/imported-value/versions/3")[1]["id"] == 100
    assert registry.error("POST", "/subjects/orders-value/versions", {"schema": ADDRESS, "id": 7}) == (
        422,
        42205,
    )
    assert registry.call("GET", "/mode/imported-value") == (200, {"mode": "IMPORT"})


def test_the_schemas_topic_holds_confluents_json_both_ways(kafka_shim: KafkaShim, registry: Registry) -> None:
    registry.call("POST", "/subjects/orders-value/versions", {"schema": ORDER})
    registry.call("PUT", "/config/orders-value", {"compatibility": "FULL"})
    consumer = Consumer(
        {"bootstrap.servers": kafka_shim.bootstrap, "group.id": "g", "auto.offset.reset": "earliest"}
    )
    consumer.subscribe(["_schemas"])
    found: list[tuple[bytes, bytes]] = []
    for _ in range(50):
        message = consumer.poll(0.2)
        if message is not None and message.error() is None:
            found.append((message.key() or b"", message.value() or b""))
        if len(found) == 2:
            break
    consumer.close()
    assert found[0][0] == b'{"keytype":"SCHEMA","subject":"orders-value","version":1,"magic":1}'
    assert json.loads(found[0][1]) == {
        "subject": "orders-value", "version": 1, "id": 1, "schema": ORDER, "deleted": False
    }  # fmt: skip
    assert found[1] == (
        b'{"keytype":"CONFIG","subject":"orders-value","magic":0}',
        b'{"subject":"orders-value","compatibilityLevel":"FULL"}',
    )
    # A record as Confluent's registry writes it, appended by another client, is read too.
    producer = Producer({"bootstrap.servers": kafka_shim.bootstrap})
    key = b'{"keytype":"SCHEMA","subject":"from-confluent","version":1,"magic":1}'
    value = {
        "subject": "from-confluent",
        "version": 1,
        "id": 42,
        "schemaType": "JSON",
        "schema": '{"type":"string"}',
        "deleted": False,
    }
    producer.produce("_schemas", key=key, value=json.dumps(value).encode())
    assert producer.flush(10) == 0
    assert registry.call("GET", "/schemas/ids/42") == (
        200,
        {"schemaType": "JSON", "schema": '{"type":"string"}'},
    )
    assert registry.call("POST", "/subjects/next/versions", {"schema": '"int"'}) == (200, {"id": 43})


def test_the_registry_log_line_names_the_address_bound(caplog: pytest.LogCaptureFixture) -> None:
    """--schema-registry 0.0.0.0:PORT (as in the Docker image) binds every interface, and says so;
    schema_registry_urls give the loopback address this machine reaches it at."""
    caplog.set_level(logging.INFO, "kafka_shim.server")
    thread = BrokerThread(BrokerConfig(port=0, schema_registry_listener="0.0.0.0:0")).start()
    try:
        # Its addresses are kept just before the line is logged, on the broker's thread.
        wait_until(lambda: "schema registry on" in caplog.text, "the registry listening", deadline_s=30)
        port = thread.server.schema_registry_urls[0].rsplit(":", 1)[1]
        assert f"schema registry on http://0.0.0.0:{port}" in caplog.text
        assert thread.server.schema_registry_urls == [f"http://127.0.0.1:{port}"]
    finally:
        thread.stop()
