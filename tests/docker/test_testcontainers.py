"""Code written for testcontainers' KafkaContainer, run with KafkaShimContainer on a machine
without a kafka-shim image: the image is built from the installed package, Kafka's image name,
with_kraft() and the listener variables are ignored (and said so), KAFKA_* variables configure."""

from __future__ import annotations

import contextlib
import logging
import uuid
from collections.abc import Iterator

import docker
import pytest
from confluent_kafka.admin import AdminClient, NewTopic

from kafka_shim.testcontainers import IMAGE_ENV, KafkaShimContainer

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]


@pytest.fixture
def no_prebuilt_image(image: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """A kafka-shim image name nothing on this machine has built yet; removed afterwards."""
    name = f"kafka-shim-fresh-{uuid.uuid4().hex[:8]}:latest"
    monkeypatch.setenv(IMAGE_ENV, name)
    try:
        yield name
    finally:
        with contextlib.suppress(docker.errors.ImageNotFound):
            docker.from_env().images.remove(name, force=True)


def test_kafkacontainer_code_passes_with_kafkashimcontainer_and_no_prebuilt_image(
    no_prebuilt_image: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="kafka_shim.testcontainers")
    container = (
        KafkaShimContainer("confluentinc/cp-kafka:7.6.0")
        .with_kraft()
        .with_env("KAFKA_NUM_PARTITIONS", "3")
        .with_env("KAFKA_LISTENERS", "PLAINTEXT://0.0.0.0:9093,BROKER://0.0.0.0:9092")
    )
    with container as kafka:
        admin = AdminClient({"bootstrap.servers": kafka.get_bootstrap_server()})
        admin.create_topics([NewTopic("orders")])["orders"].result(30)
        described = admin.list_topics(timeout=30).topics["orders"]
        assert len(described.partitions) == 3  # KAFKA_NUM_PARTITIONS, the broker's default
        del admin  # its threads stop before the broker does
    assert docker.from_env().images.get(no_prebuilt_image)
    warned = " ".join(r.getMessage() for r in caplog.records)
    for ignored in ("confluentinc/cp-kafka:7.6.0", "with_kraft()", "KAFKA_LISTENERS", "building it"):
        assert ignored in warned
