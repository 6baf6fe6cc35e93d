"""examples/compose/docker-compose.yml, written for apache/kafka, run unchanged on kafka-shim's
image (only KAFKA_IMAGE changes), published on a host port other than 9092 while another broker
serves the host's 9092: the app container produces and consumes through the broker's network
listener, a client on the host reaches it through the mapped port, and nothing reaches the
broker on 9092."""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import docker
import pytest
from kafka import KafkaConsumer, KafkaProducer

from kafka_shim.shim.config.broker_config import BrokerConfig
from kafka_shim.shim.server import BrokerThread

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]
COMPOSE_FILE = Path(__file__).resolve().parents[2] / "examples" / "compose" / "docker-compose.yml"
APP_TIMEOUT_S = 120


def compose_command() -> list[str]:
    """`docker compose` (the plugin) or Debian's `docker-compose`; .ci/run installs the latter."""
    plugin = subprocess.run(["docker", "compose", "version"], capture_output=True, check=False)
    if plugin.returncode == 0:
        return ["docker", "compose"]
    if shutil.which("docker-compose"):
        return ["docker-compose"]
    pytest.fail("neither `docker compose` nor docker-compose here (bash .ci/run installs docker-compose)")


def app_base_image() -> str:
    """An image with python3 and venv for the app: the local base image CI builds (no registry
    reachable), else the app Dockerfile's own default."""
    tags = docker.from_env().images.list("kafka-shim-base")
    names = [tag for image in tags for tag in image.tags]
    return sorted(names)[-1] if names else "python:3.11-slim"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture
def broker_on_9092() -> Iterator[BrokerThread | None]:
    """Another broker on the host's 9092, as a developer's own Kafka would be (None: the port is
    already taken by something else, which the stack must not disturb either)."""
    try:
        thread = BrokerThread(BrokerConfig(host="127.0.0.1", port=9092, data_dir=None)).start()
    except RuntimeError:
        yield None
        return
    try:
        yield thread
    finally:
        thread.stop()


def test_a_compose_stack_for_apache_kafka_runs_on_kafka_shim(
    image: str, broker_on_9092: BrokerThread | None
) -> None:
    compose = compose_command()
    host_port = free_port()
    project = f"kshim-{uuid.uuid4().hex[:8]}"
    env = {
        **os.environ,
        "KAFKA_IMAGE": image,
        "KAFKA_HOST_PORT": str(host_port),
        "APP_BASE_IMAGE": app_base_image(),
    }
    base = [*compose, "-p", project, "-f", str(COMPOSE_FILE)]

    def run(*args: str, timeout: float = APP_TIMEOUT_S) -> subprocess.CompletedProcess[str]:
        return subprocess.run([*base, *args], env=env, capture_output=True, text=True, timeout=timeout)

    try:
        up = run("up", "-d", "--build")
        assert up.returncode == 0, up.stderr[-3000:]
        app_id = run("ps", "-q", "app").stdout.strip()
        app = docker.from_env().containers.get(app_id)
        exit_code = app.wait(timeout=APP_TIMEOUT_S)["StatusCode"]
        logs = run("logs", "--no-color").stdout
        assert exit_code == 0 and "app: ok" in logs, logs[-3000:]
        # The host's client, through the published port the broker advertises.
        bootstrap = f"localhost:{host_port}"
        producer = KafkaProducer(bootstrap_servers=bootstrap)
        producer.send("orders", b"from-the-host").get(timeout=30)
        producer.close()
        consumer = KafkaConsumer(
            "orders", bootstrap_servers=bootstrap, auto_offset_reset="earliest", consumer_timeout_ms=5000
        )
        values = sorted(message.value for message in consumer)
        consumer.close()
        assert values == [b"from-the-host", b"order-1", b"order-2", b"order-3"]
        if broker_on_9092 is not None:
            assert broker_on_9092.call(lambda: broker_on_9092.broker.topics.get("orders")) is None
        assert "accepted, no effect here: controller.listener.names" in logs
    finally:
        with contextlib.suppress(subprocess.TimeoutExpired):
            run("down", "-v", "--rmi", "local", timeout=60)


def test_the_image_is_healthy_once_it_answers(image: str) -> None:
    """The image's HEALTHCHECK (kafka-shim healthcheck) turns healthy: compose's
    `depends_on: condition: service_healthy` works with it."""
    environment = {"KAFKA_NUM_PARTITIONS": "2"}
    container = docker.from_env().containers.run(image, detach=True, environment=environment)
    try:
        deadline = time.monotonic() + 60
        status = ""
        while time.monotonic() < deadline:
            container.reload()
            status = container.attrs["State"].get("Health", {}).get("Status", "")
            if status in ("healthy", "unhealthy"):
                break
            time.sleep(0.2)
        assert status == "healthy", container.logs().decode()[-2000:]
    finally:
        container.remove(force=True, v=True)
