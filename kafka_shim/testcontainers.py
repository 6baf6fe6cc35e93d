"""`KafkaShimContainer`: kafka-shim's Docker image as a testcontainers container, the
drop-in replacement for testcontainers' `KafkaContainer` in your tests.

    from kafka_shim.testcontainers import KafkaShimContainer

    with KafkaShimContainer() as kafka:                    # image: $KAFKA_SHIM_IMAGE or kafka-shim:latest
        producer = KafkaProducer(bootstrap_servers=kafka.get_bootstrap_server())

Importable only where the `testcontainers` package is installed (it subclasses its
`DockerContainer`); elsewhere the import fails with an ImportError saying so.

It takes what code written for testcontainers' `KafkaContainer` (testcontainers.community.kafka,
formerly testcontainers.kafka) passes: `with_kraft()`, `with_cluster_id()`, `with_env("KAFKA_...")`
(broker configs, named as Kafka's image names them), `port=`, `start(timeout)`, an image name.
A Kafka image name (confluentinc/cp-kafka, apache/kafka, bitnami/kafka) runs kafka-shim's image
instead; what changes nothing here is logged once at start (`ignored`). With no kafka-shim image
on the machine, the image is built from the installed package (no image registry needed for
kafka-shim itself; its base image is $KAFKA_SHIM_BASE_IMAGE, else a local `kafka-shim-base` image
as .ci/docker/base-image.sh builds without a registry, else python:3.11-slim).

Clients on the Docker host connect to the mapped port: the host port is chosen before the
container starts and published to the broker's PLAINTEXT listener, which advertises exactly
that host:port, so the mapping survives `restart()` and no start-up script is needed. A
second listener, BROKER on port 19092, serves other containers on the same Docker network
and advertises the container's first network alias (else its host name).
"""

from __future__ import annotations

import contextlib
import importlib.metadata
import logging
import os
import shutil
import socket
import tempfile
import time
from pathlib import Path
from typing import Any, Self

try:
    from docker.errors import APIError, ImageNotFound
    from testcontainers.core.container import DockerContainer
    from testcontainers.core.docker_client import ConnectionMode
except ImportError as exc:  # pragma: no cover - depends on the environment
    raise ImportError(
        "kafka_shim.testcontainers needs the testcontainers package: pip install testcontainers"
    ) from exc

IMAGE_ENV = "KAFKA_SHIM_IMAGE"
DEFAULT_IMAGE = "kafka-shim:latest"  # what `docker build -t kafka-shim .` tags
CLIENT_PORT = 9092  # the PLAINTEXT listener, published on the host
NETWORK_PORT = 19092  # the BROKER listener, for containers on the same network
CONTROL_PORT = 9094  # the test broker's control endpoint (with_control), published on a free port
SCHEMA_REGISTRY_PORT = 8081  # the schema registry the image serves, published on a free port
CONSOLE_PORT = 8080  # the web console and /metrics, on every interface in the image (with_console)
LISTENING = "kafka-shim listening on"
_PORT_TAKEN = ("port is already allocated", "address already in use")
# Images of Apache Kafka that code written for KafkaContainer names: kafka-shim runs instead.
KAFKA_IMAGES = ("confluentinc/cp-kafka", "apache/kafka", "apache/kafka-native", "bitnami/kafka")
BASE_IMAGE_ENV = "KAFKA_SHIM_BASE_IMAGE"
FALLBACK_BASE_IMAGE = "python:3.11-slim"
# KafkaContainer's listener variables: KafkaShimContainer sets its own listeners.
LISTENER_VARIABLES = ("KAFKA_LISTENERS", "KAFKA_ADVERTISED_LISTENERS", "KAFKA_LISTENER_SECURITY_PROTOCOL_MAP")
log = logging.getLogger(__name__)


def default_image() -> str:
    return os.environ.get(IMAGE_ENV, DEFAULT_IMAGE)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class MappedPortContainer(DockerContainer):
    """A Kafka-protocol broker that must advertise the host port its client port is mapped to.

    The host port is chosen here and published before the container starts (retried if
    another process takes it first), so `configure` can put it in the broker's settings and
    the mapping survives a restart. Subclasses say how to configure the broker and which log
    line means it is serving."""

    client_port = CLIENT_PORT
    ready_line = ""

    def __init__(self, image: str, start_timeout_s: float = 60.0, **kwargs: object) -> None:
        super().__init__(image, **kwargs)  # type: ignore[arg-type]
        self.start_timeout_s = start_timeout_s
        self.host_port: int | None = None
        self._starts = 0  # each start prints the ready line once into the same container log

    def configure(self, advertised_host: str, host_port: int) -> None:
        """Set the command or environment that makes the broker advertise host:port."""
        where = f"{advertised_host}:{host_port}"
        raise NotImplementedError(f"{type(self).__name__} must say how to advertise {where}")

    def get_bootstrap_server(self) -> str:
        if self.host_port is None:
            raise RuntimeError(f"{type(self).__name__} is not started")
        return f"{self.get_container_host_ip()}:{self.host_port}"

    def start(self) -> Self:
        client = self.get_docker_client()
        if client.get_connection_mode() is not ConnectionMode.docker_host:
            raise RuntimeError(
                f"{type(self).__name__} advertises the Docker host's mapped port, so it needs "
                "testcontainers' docker_host connection mode (set TESTCONTAINERS_CONNECTION_MODE="
                "docker_host and make the Docker host's published ports reachable from here)"
            )
        for attempt in range(3):
            # Chosen here, not by Docker, so the broker can advertise it from its first answer on.
            self.host_port = _free_port()
            self.with_bind_ports(self.client_port, self.host_port)
            self.configure(client.host(), self.host_port)
            try:
                super().start()
                break
            except APIError as exc:
                taken = any(reason in str(exc) for reason in _PORT_TAKEN)
                self._remove_quietly()
                if not taken or attempt == 2:
                    raise
        self._starts = 1
        self._wait_until_ready()
        return self

    def restart(self, timeout_s: int = 10) -> Self:
        """`docker restart` (SIGTERM, then start again): the same host port, the same volumes."""
        self.get_wrapped_container().restart(timeout=timeout_s)
        self._starts += 1
        self._wait_until_ready()
        return self

    def _wait_until_ready(self) -> None:
        """Until the ready line was printed once for every start."""
        container = self.get_wrapped_container()
        deadline = time.monotonic() + self.start_timeout_s
        while True:
            logs = container.logs().decode(errors="replace")
            if logs.count(self.ready_line) >= self._starts:
                return
            container.reload()
            if container.status in ("exited", "dead") or time.monotonic() > deadline:
                state = f"{self.image}, container {container.status}"
                raise RuntimeError(f"the broker did not start ({state}); its output:\n{logs[-3000:]}")
            time.sleep(0.02)

    def _remove_quietly(self) -> None:
        if self._container is not None:
            with contextlib.suppress(APIError):
                self._container.remove(force=True, v=True)
            self._container = None


class KafkaShimContainer(MappedPortContainer):
    """kafka-shim in a container; `get_bootstrap_server()` as testcontainers' KafkaContainer."""

    ready_line = LISTENING

    def __init__(
        self,
        image: str | None = None,
        start_timeout_s: float = 60.0,
        *,
        port: int = CLIENT_PORT,
        **kwargs: Any,
    ) -> None:
        self.ignored: list[str] = []
        for name in ("wait_strategy_check_string", "listener_name", "security_protocol"):
            if name in kwargs:
                self.ignored.append(f"{name}={kwargs.pop(name)!r} (kafka-shim logs its own ready line)")
        chosen = image or default_image()
        if image is not None and image.rsplit(":", 1)[0].split("@")[0].endswith(KAFKA_IMAGES):
            self.ignored.append(f"image {image!r} (Apache Kafka's): runs {default_image()}")
            chosen = default_image()
        super().__init__(chosen, start_timeout_s, **kwargs)
        self.client_port = port
        self.broker_config: dict[str, str] = {}
        self.control = False
        self.console = False
        self.with_exposed_ports(NETWORK_PORT, SCHEMA_REGISTRY_PORT)

    def get_schema_registry_url(self) -> str:
        """The schema registry (Confluent's REST API, docs/schema-registry.md) as the host
        reaches it: confluent-kafka's `schema.registry.url`. Containers on the same network
        reach it on port 8081 of the container's network alias."""
        return f"http://{self.get_container_host_ip()}:{self.get_exposed_port(SCHEMA_REGISTRY_PORT)}"

    def with_broker_config(self, name: str, value: object) -> Self:
        """A Kafka broker config (`--config name=value`), e.g. ("num.partitions", 3)."""
        self.broker_config[name] = str(value).lower() if isinstance(value, bool) else str(value)
        return self

    def with_control(self) -> Self:
        """Serve the test broker's control endpoint (fault rules, the broker's clock, recorded
        requests: docs/test-broker.md) on a published port; `get_control_url()` says where."""
        self.control = True
        self.with_exposed_ports(CONTROL_PORT)
        return self

    def get_control_url(self) -> str:
        """The control endpoint as the host reaches it, for `kafka-shim ctl --url` or HTTP."""
        if not self.control:
            raise RuntimeError("no control endpoint: start the container with with_control()")
        return f"http://{self.get_container_host_ip()}:{self.get_exposed_port(CONTROL_PORT)}"

    def with_console(self) -> Self:
        """Publish the web console and /metrics (docs/console.md) on a free port of the host;
        `get_console_url()` says where."""
        self.console = True
        self.with_exposed_ports(CONSOLE_PORT)
        return self

    def get_console_url(self) -> str:
        """The console as the host reaches it (`.../console`, `.../metrics`)."""
        if not self.console:
            raise RuntimeError("the console is not published: start the container with with_console()")
        return f"http://{self.get_container_host_ip()}:{self.get_exposed_port(CONSOLE_PORT)}"

    def with_kraft(self) -> Self:
        """KafkaContainer's KRaft mode: kafka-shim has no ZooKeeper mode to leave."""
        self.ignored.append("with_kraft() (no ZooKeeper either way)")
        return self

    def with_cluster_id(self, cluster_id: str) -> Self:
        self.ignored.append(f"with_cluster_id({cluster_id!r}) (kafka-shim picks its own cluster id)")
        return self

    def configure(self, advertised_host: str, host_port: int) -> None:
        self.with_command(self.broker_args(advertised_host, host_port))

    def broker_args(self, advertised_host: str, host_port: int) -> list[str]:
        """The broker's command line (after the image's `kafka-shim container` entrypoint)."""
        aliases = self._network_aliases or []
        network_host = aliases[0] if aliases else ""  # empty: the container's host name
        args = [
            "--listeners",
            f"PLAINTEXT://:{self.client_port},BROKER://:{NETWORK_PORT}",
            "--advertised-listeners",
            f"PLAINTEXT://{advertised_host}:{host_port},BROKER://{network_host}:{NETWORK_PORT}",
            "--config",
            "listener.security.protocol.map=PLAINTEXT:PLAINTEXT,BROKER:PLAINTEXT",
        ]
        for name, value in self.broker_config.items():
            args += ["--config", f"{name}={value}"]
        if self.control:
            args += ["--control", f"0.0.0.0:{CONTROL_PORT}"]
        return args

    def start(self, timeout: float | None = None) -> Self:
        """Start (KafkaContainer's `start(timeout)` sets the start timeout), building the image
        from the installed package first if it is not on this machine."""
        if timeout is not None:
            self.start_timeout_s = timeout
        client = self.get_docker_client().client
        try:
            client.images.get(self.image)
        except ImageNotFound:
            build_image(self.image)
        overridden = [name for name in LISTENER_VARIABLES if name in self.env]
        if overridden:
            self.ignored.append(f"{', '.join(overridden)} (KafkaShimContainer sets the listeners)")
        if self.ignored:
            log.warning("KafkaShimContainer ignores: %s", "; ".join(self.ignored))
        return super().start()


# The image built from the installed package: the same layout as the repository's Dockerfile
# (a venv with the dependencies, a non-root user, /data, the `container` entrypoint), with the
# package copied as it is installed instead of built from the source tree.
_PACKAGE_DOCKERFILE = """\
ARG BASE_IMAGE
FROM $BASE_IMAGE
ENV PATH=/opt/kafka-shim/bin:$PATH PYTHONUNBUFFERED=1 PYTHONPATH=/opt/kafka-shim-src
RUN python3 -m venv /opt/kafka-shim && pip install --no-cache-dir --disable-pip-version-check {requirements}
COPY kafka_shim /opt/kafka-shim-src/kafka_shim
RUN useradd --system --uid 1000 --user-group --home-dir /data --no-create-home kafka-shim \\
    && mkdir /data && chown kafka-shim:kafka-shim /data
USER kafka-shim
VOLUME /data
EXPOSE 9092 19092 8080 8081 9094
ENTRYPOINT ["python3", "-m", "kafka_shim", "container"]
HEALTHCHECK --interval=2s --timeout=3s --start-period=10s --retries=5 \\
    CMD ["python3", "-m", "kafka_shim", "healthcheck"]
"""


def base_image() -> str:
    """The image kafka-shim's is built on: $KAFKA_SHIM_BASE_IMAGE, else the newest local
    kafka-shim-base image (built without a registry by .ci/docker/base-image.sh), else
    python:3.11-slim (pulled)."""
    if os.environ.get(BASE_IMAGE_ENV):
        return os.environ[BASE_IMAGE_ENV]
    import docker

    local = sorted(tag for image in docker.from_env().images.list("kafka-shim-base") for tag in image.tags)
    return local[-1] if local else FALLBACK_BASE_IMAGE


def build_image(tag: str) -> None:
    """Build kafka-shim's image as `tag` from the installed package (a minute: pip installs
    the dependencies); RuntimeError saying what to do when it cannot."""
    import docker

    import kafka_shim

    requirements = [f"'{r}'" for r in importlib.metadata.requires("kafka-shim") or [] if "extra ==" not in r]
    base = base_image()
    log.warning("kafka-shim image %s not found: building it from the installed package on %s", tag, base)
    with tempfile.TemporaryDirectory() as context:
        # Links (an editable install's layer folders) are copied as what they point to.
        shutil.copytree(
            Path(kafka_shim.__file__).parent,
            Path(context) / "kafka_shim",
            ignore=shutil.ignore_patterns("__pycache__", "*.pyc"),
        )
        (Path(context) / "Dockerfile").write_text(
            _PACKAGE_DOCKERFILE.format(requirements=" ".join(requirements)), encoding="utf-8"
        )
        try:
            docker.from_env().images.build(
                path=context, tag=tag, buildargs={"BASE_IMAGE": base}, network_mode="host", rm=True
            )
        except (APIError, docker.errors.BuildError) as exc:
            raise RuntimeError(
                f"cannot build the kafka-shim image {tag} on {base}: {exc}. Where no image registry "
                f"is reachable, build a base image without one (bash .ci/docker/base-image.sh in the "
                f"kafka-shim repository) and set {BASE_IMAGE_ENV} to its tag, or build kafka-shim's "
                f"image from the repository: docker build -t {tag} ."
            ) from exc
