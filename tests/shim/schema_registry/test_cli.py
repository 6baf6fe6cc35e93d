"""`kafka-shim schemas list|get|register|check` against the broker's registry."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kafka_shim.pytest_plugin import KafkaShim
from kafka_shim.shim.cli.main import main

V1 = {"type": "record", "name": "Order", "fields": [{"name": "id", "type": "long"}]}
V2 = {**V1, "fields": [*V1["fields"], {"name": "note", "type": "string", "default": ""}]}  # type: ignore[list-item]
BROKEN = {**V1, "fields": [*V1["fields"], {"name": "note", "type": "string"}]}  # type: ignore[list-item]


def schemas(url: str, *argv: str) -> int:
    return main(["schemas", "--url", url, *argv])


def test_register_list_get_and_check(
    kafka_shim: KafkaShim, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    url = kafka_shim.schema_registry_url
    files = {}
    for name, schema in (("v1", V1), ("v2", V2), ("broken", BROKEN)):
        files[name] = tmp_path / f"{name}.avsc"
        files[name].write_text(json.dumps(schema))
    assert schemas(url, "register", "orders-value", str(files["v1"])) == 0
    assert capsys.readouterr().out == "orders-value: id 1\n"
    assert schemas(url, "check", "orders-value", str(files["v2"])) == 0
    assert capsys.readouterr().out == "orders-value: compatible\n"
    assert schemas(url, "check", "orders-value", str(files["broken"])) == 1
    said = capsys.readouterr().out
    assert said.startswith("orders-value: incompatible\n") and "note" in said
    assert schemas(url, "register", "orders-value", str(files["broken"])) == 1
    assert "error 409" in capsys.readouterr().err
    assert schemas(url, "list") == 0
    assert capsys.readouterr().out == "orders-value  version 1  id 1  AVRO  BACKWARD\n"
    assert schemas(url, "get", "orders-value") == 0
    out = capsys.readouterr().out
    assert out.startswith("# orders-value version 1 id 1 AVRO\n") and json.loads(out.split("\n", 1)[1]) == V1
    assert schemas(url, "get", "nope") == 1
    assert "error 40401" in capsys.readouterr().err


def test_an_unreachable_registry_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert schemas("http://127.0.0.1:9", "list") == 2
    assert "cannot reach the schema registry" in capsys.readouterr().err
