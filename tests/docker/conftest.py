"""The project's Docker image, as `.ci/run` builds it (`kafka-shim:latest`, or $KAFKA_SHIM_IMAGE).

No Docker engine answering: every test here is skipped with the engine's reason. An engine
but no image: a failure saying how to build it (CI builds it before pytest)."""

from __future__ import annotations

import os

import pytest

from compat.targets import docker_missing

# Read by testcontainers when first imported: these tests remove their own containers,
# Ryuk's image cannot be pulled where no registry is reachable, and clients reach the
# containers through ports published on the Docker host.
os.environ.setdefault("TESTCONTAINERS_RYUK_DISABLED", "true")
os.environ.setdefault("TESTCONTAINERS_CONNECTION_MODE", "docker_host")


@pytest.fixture(scope="session")
def image() -> str:
    reason = docker_missing()
    if reason is not None:
        pytest.skip(reason)
    import docker

    from kafka_shim.testcontainers import default_image

    name = default_image()
    try:
        docker.from_env().images.get(name)
    except docker.errors.ImageNotFound:
        pytest.fail(
            f"image {name} not built: docker build -t {name} . (bash .ci/run builds it)", pytrace=False
        )
    return name
