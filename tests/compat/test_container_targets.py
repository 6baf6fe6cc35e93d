"""The container targets, whatever COMPAT_TARGET says: kafka-shim's own image runs a subset
of the matrix (CI's time budget: the data round trip and the group join/leave/crash scenario
for three clients; `COMPAT_TARGET=kafka-shim-docker` runs all of it), and the kafka target
either serves or says why it cannot (here: its image cannot be pulled)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from compat.catalog import SCENARIOS
from compat.scenario import Outcome, run_cell
from compat.targets import (
    KAFKA_IMAGE,
    TargetUnavailable,
    docker_missing,
    image_missing,
    start_kafka,
)
from kafka_shim.testcontainers import default_image
from tests.wire import WireClient

SHIM_DOCKER = "kafka-shim-docker"
SUBSET_SCENARIOS = ("roundtrip", "group-join-leave-crash")
SUBSET_CLIENTS = ("kafka-python", "confluent-kafka", "kafkajs")
API_VERSIONS = 18


@pytest.mark.clients
@pytest.mark.slow
@pytest.mark.parametrize("client", SUBSET_CLIENTS)
@pytest.mark.parametrize("scenario", SUBSET_SCENARIOS)
def test_kafka_shim_image_subset(scenario: str, client: str, keep_outcome: Callable[[Outcome], None]) -> None:
    engine = docker_missing()
    if engine is not None:
        pytest.skip(f"no Docker engine: {engine}")
    # An engine but no image is a failure: `bash .ci/run` builds the image before pytest.
    reason = image_missing(default_image())
    assert reason is None, f"the {SHIM_DOCKER} image cannot run ({reason}): bash .ci/run builds it"
    outcome = run_cell(SCENARIOS[scenario], client, SHIM_DOCKER)
    keep_outcome(outcome)
    assert outcome.status == "pass", f"[{SHIM_DOCKER}] {scenario} x {client}: {outcome.detail}"


@pytest.mark.slow
def test_kafka_target_serves_or_names_the_missing_image() -> None:
    if docker_missing() is not None:
        pytest.skip(f"no Docker engine: {docker_missing()}")
    try:
        broker = start_kafka()
    except TargetUnavailable as exc:
        assert f"image {KAFKA_IMAGE} not present and cannot be pulled" in str(exc)
        pytest.skip(str(exc))
    with broker, WireClient(broker.bootstrap, timeout_s=30) as client:
        answer = client.request(
            API_VERSIONS, 3, {"client_software_name": "t", "client_software_version": "1"}
        )
    assert answer.error_code == 0
