"""kafka-clients as the outside oracle of the message declarations: its generated message
classes (made from Kafka's own message JSON) encode the same content, compat/java's
MessageOracle prints the bytes. One JVM answers every sample of a test module; an older
kafka-clients release (compat/java_build.OLDER_KAFKA_CLIENTS) answers for the release it was."""

from __future__ import annotations

import base64
import json
import subprocess
import uuid
from collections.abc import Sequence
from typing import Any

from compat.java_build import KAFKA_CLIENTS, JavaDriverUnavailable, _require_tool, release_classpath
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
    commands = [
        {"name": message.name, "version": version, "data": kafka_json(message.fields, value, version)}
        for message, version, value in samples
    ]
    answers = ask_kafka_clients(commands)
    refused = [
        (c["name"], c["version"], a) for c, a in zip(commands, answers, strict=True) if a.startswith("!")
    ]
    if refused:
        raise AssertionError(f"kafka-clients refused: {refused}")
    return [bytes.fromhex(answer) for answer in answers]


def ask_kafka_clients(commands: Sequence[dict[str, Any]], kafka_clients: str = KAFKA_CLIENTS) -> list[str]:
    """MessageOracle's answer to each command, in one JVM of kafka-clients release
    `kafka_clients`: an encoded body in hex, or "!" and the reason kafka-clients refused it
    (compat/java/MessageOracle.java says which commands)."""
    try:
        classpath = release_classpath(kafka_clients)
        java = _require_tool("java")
    except JavaDriverUnavailable as exc:  # a failure, not a skip: CI has a JDK and the jars
        raise AssertionError(f"the Java oracle is needed (bash .ci/run installs it): {exc}") from exc
    result = subprocess.run(
        [java, "-XX:TieredStopAtLevel=1", "-Xmx256m", "-cp", classpath, "MessageOracle"],
        input="".join(json.dumps(command) + "\n" for command in commands),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    answers = result.stdout.splitlines()
    if result.returncode != 0 or len(answers) != len(commands):
        raise AssertionError(f"MessageOracle failed:\n{result.stderr}")
    return answers
