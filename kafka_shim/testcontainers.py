"""`KafkaShimContainer`: kafka-shim's Docker image as a testcontainers container, the
drop-in replacement for testcontainers' `KafkaContainer` in your tests.

    from kafka_shim.testcontainers import KafkaShimContainer

    with KafkaShimContainer() as kafka:                    # image: $KAFKA_SHIM_IMAGE or kafka-shim:latest
        producer = KafkaProducer(bootstrap_servers=kafka.get_bootstrap_server())

Importable only where the `testcontainers` package is installed (it subclasses its
`DockerContainer`); elsewhere the import fails with an ImportError saying so.

Clients on the Docker host connect to the mapped port: the host port is chosen before the
container starts and published to the broker's PLAINTEXT listener, which advertises exactly
that host:port, so the mapping survives `restart()` and no start-up script is needed. A
second listener, BROKER on port 19092, serves other containers on the same Docker network
and advertises the container's first network alias (else its host name).
"""

from __future__ import annotations

import contextlib
import os
import socket
import time
from typing import Self

try:
    from docker.errors import APIError
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
LISTENING = "kafka-shim listening on"
_PORT_TAKEN = ("port is already allocated", "address already in use")


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

    def __init__(self, image: str | None = None, start_timeout_s: float = 60.0, **kwargs: object) -> None:
        super().__init__(image or default_image(), start_timeout_s, **kwargs)
        self.broker_config: dict[str, str] = {}
        self.with_exposed_ports(NETWORK_PORT)

    def with_broker_config(self, name: str, value: object) -> Self:
        """A Kafka broker config (`--config name=value`), e.g. ("num.partitions", 3)."""
        self.broker_config[name] = str(value).lower() if isinstance(value, bool) else str(value)
        return self

    def configure(self, advertised_host: str, host_port: int) -> None:
        self.with_command(self.broker_args(advertised_host, host_port))

    def broker_args(self, advertised_host: str, host_port: int) -> list[str]:
        """The broker's command line (after the image's `kafka-shim` entrypoint)."""
        aliases = self._network_aliases or []
        network_host = aliases[0] if aliases else ""  # empty: the container's host name
        args = [
            "--data-dir",
            "/data",
            "--listeners",
            f"PLAINTEXT://:{CLIENT_PORT},BROKER://:{NETWORK_PORT}",
            "--advertised-listeners",
            f"PLAINTEXT://{advertised_host}:{host_port},BROKER://{network_host}:{NETWORK_PORT}",
            "--config",
            "listener.security.protocol.map=PLAINTEXT:PLAINTEXT,BROKER:PLAINTEXT",
        ]
        for name, value in self.broker_config.items():
            args += ["--config", f"{name}={value}"]
        return args
