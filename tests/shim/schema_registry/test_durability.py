"""What the registry answered survives the broker's crash: a `kafka-shim` process on disk
killed with SIGKILL right after registering still serves the schema, its id and its level when
started again (the record was fsynced before the answer), and registrations made at once from
many clients get one id each (writes are serialized)."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import requests

from compat.targets import free_port
from kafka_shim.pytest_plugin import KafkaShim
from tests.helpers import wait_until

MEDIA = {"Content-Type": "application/vnd.schemaregistry.v1+json"}


def start(data_dir: Path, registry_port: int) -> subprocess.Popen[bytes]:
    argv = [sys.executable, "-m", "kafka_shim", "--data-dir", str(data_dir), "--port", "0"]
    argv += ["--console", "off", "--schema-registry", f"127.0.0.1:{registry_port}", "--fsync", "interval"]
    return subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def answers(url: str) -> bool:
    try:
        return requests.get(f"{url}/subjects", timeout=2).status_code == 200
    except requests.RequestException:
        return False


def test_a_registered_schema_survives_sigkill(tmp_path: Path) -> None:
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    broker = start(tmp_path, port)
    try:
        wait_until(lambda: answers(url), "the registry answering", deadline_s=30)
        schema = json.dumps({"type": "record", "name": "Order", "fields": [{"name": "id", "type": "long"}]})
        registered = requests.post(
            f"{url}/subjects/orders-value/versions", json={"schema": schema}, timeout=10
        )
        assert registered.json() == {"id": 1}
        leveled = requests.put(
            f"{url}/config/orders-value", json={"compatibility": "FULL"}, headers=MEDIA, timeout=10
        )
        assert leveled.status_code == 200
    finally:
        broker.send_signal(signal.SIGKILL)  # no clean shutdown: only what was fsynced stays
        broker.wait(timeout=10)
    again = start(tmp_path, port)
    try:
        wait_until(lambda: answers(url), "the registry answering again", deadline_s=30)
        found = requests.get(f"{url}/subjects/orders-value/versions/latest", timeout=10).json()
        assert (found["version"], found["id"], found["schema"]) == (1, 1, schema)
        assert requests.get(f"{url}/config/orders-value", timeout=10).json() == {"compatibilityLevel": "FULL"}
    finally:
        again.terminate()
        again.wait(timeout=10)


def test_concurrent_registrations_get_one_id_each(kafka_shim: KafkaShim) -> None:
    url = kafka_shim.schema_registry_url

    def register(n: int) -> int:
        schema = json.dumps({"type": "enum", "name": f"E{n}", "symbols": ["A"]})
        answer = requests.post(f"{url}/subjects/s{n}-value/versions", json={"schema": schema}, timeout=20)
        return int(answer.json()["id"])

    with ThreadPoolExecutor(8) as pool:
        ids = list(pool.map(register, range(24)))
    assert sorted(ids) == list(range(1, 25))
