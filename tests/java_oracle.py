"""kafka-clients as the outside oracle of the message declarations: its generated message
classes (made from Kafka's own message JSON) encode the same content, compat/java's
MessageOracle prints the bytes. One JVM answers every sample of a test module."""

from __future__ import annotations

import base64
import json
import subprocess
import uuid
from collections.abc import Sequence
from typing import Any

from compat.java_build import _require_tool, compiled_classpath
from kafka_shim.protocol import schema as s


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.capitalize() for part in rest)


def _json_value(field_type: s.FieldType, value: Any, version: int) -> Any:
    if value is None:
        return None
    if isinstance(field_type, s.Struct):
        return kafka_json(field_type.fields, value, version)
    if isinstance(field_type, s.Array):
        return [_json_value(field_type.element, item, version) for item in value]
    if isinstance(value, uuid.UUID):  # Kafka's Uuid text: URL-safe base64 without padding
        return base64.urlsafe_b64encode(value.bytes).decode().rstrip("=")
    if isinstance(value, bytes):
        return base64.b64encode(value).decode()
    return value


def kafka_json(fields: Sequence[s.Field], value: dict[str, Any], version: int) -> dict[str, Any]:
    """`value` as Kafka's JsonConverters read it: camelCase names, only this version's fields."""
    return {
        _camel(f.name): _json_value(f.type, value[f.name], version)
        for f in fields
        if version in f.versions and f.name in value
    }


def encode_with_kafka_clients(samples: Sequence[tuple[s.Message, int, dict[str, Any]]]) -> list[bytes]:
    """The body kafka-clients encodes for each (message, version, value)."""
    classpath = compiled_classpath()  # JavaDriverUnavailable fails the test: CI has a JDK
    java = _require_tool("java")
    lines = [
        json.dumps(
            {"name": message.name, "version": version, "data": kafka_json(message.fields, value, version)}
        )
        for message, version, value in samples
    ]
    result = subprocess.run(
        [java, "-XX:TieredStopAtLevel=1", "-Xmx128m", "-cp", classpath, "MessageOracle"],
        input="\n".join(lines) + "\n",
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    if result.returncode != 0:
        raise AssertionError(f"MessageOracle failed:\n{result.stderr}")
    return [bytes.fromhex(line) for line in result.stdout.splitlines()]
