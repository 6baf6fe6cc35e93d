"""The console's Schemas page reads the registry's topic: subjects with their latest version,
type and level; a subject's versions and the diff between two of them."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
import requests

from kafka_shim.shim.config.broker_config import BrokerConfig
from kafka_shim.shim.server import BrokerThread
from tests.helpers import wait_until

V1 = {"type": "record", "name": "Order", "fields": [{"name": "id", "type": "long"}]}
V2 = {
    "type": "record",
    "name": "Order",
    "fields": [{"name": "id", "type": "long"}, {"name": "note", "type": "string", "default": ""}],
}


@pytest.fixture
def broker() -> Iterator[BrokerThread]:
    config = BrokerConfig(port=0, console_listener="127.0.0.1:0", schema_registry_listener="127.0.0.1:0")
    thread = BrokerThread(config).start()
    wait_until(
        lambda: bool(thread.server.console_urls and thread.server.schema_registry_urls),
        "both listening",
        deadline_s=30,
    )
    yield thread
    thread.stop()


def test_subjects_versions_and_diff(broker: BrokerThread) -> None:
    registry, console = broker.server.schema_registry_urls[0], broker.server.console_urls[0]
    for schema in (V1, V2):
        answer = requests.post(
            f"{registry}/subjects/orders-value/versions", json={"schema": json.dumps(schema)}, timeout=10
        )
        assert answer.status_code == 200, answer.text
    requests.put(
        f"{registry}/config/orders-value", json={"compatibility": "FULL"}, timeout=10
    ).raise_for_status()
    listing = requests.get(f"{console}/console/api/subjects", timeout=10).json()
    assert listing == [
        {
            "subject": "orders-value",
            "versions": 2,
            "latest_version": 2,
            "latest_id": 2,
            "schema_type": "AVRO",
            "level": "FULL",
            "deleted": False,
        }
    ]
    page = requests.get(f"{console}/console/api/subjects/orders-value", timeout=10).json()
    assert [v["version"] for v in page["versions"]] == [1, 2]
    assert (page["diff"]["from"], page["diff"]["to"], page["level"], page["mode"]) == (
        1,
        2,
        "FULL",
        "READWRITE",
    )
    added = [line for line in page["diff"]["lines"] if line.startswith("+") and not line.startswith("+++")]
    assert any('"note"' in line for line in added), page["diff"]["lines"]
    same = requests.get(f"{console}/console/api/subjects/orders-value?from=2&to=2", timeout=10).json()
    assert same["diff"]["lines"] == []
    assert requests.get(f"{console}/console/api/subjects/nope", timeout=10).status_code == 404
