"""Launchers for every client driver: one interface, each driver a subprocess.

Every client runs in its own process speaking `compat.schema`: tests can SIGKILL a group
member, a client's crash or hang never takes the test process with it, and the Python
clients' own threads and event loops stay out of pytest's.

    driver = DRIVERS["confluent-kafka"]
    observations = driver.run(Command(op="produce", bootstrap=..., topic="t", count=1000))
    with driver.start(Command(op="member", ...)) as member:
        member.wait_for(lambda obs: obs.event == "assignment", timeout_s=30)
        member.close()
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from compat import java_build, librdkafka
from compat.schema import Assignor, Command, Observation

COMPAT_DIR = Path(__file__).resolve().parent
REPO_ROOT = COMPAT_DIR.parent
NODE_DRIVER = COMPAT_DIR / "node" / "driver.js"


class DriverFailed(RuntimeError):
    """A driver exited non-zero, reported an error, or did not finish in time."""


class DriverProcess:
    """A running driver: its observations arrive on a reader thread as they are printed."""

    def __init__(self, name: str, argv: list[str], env: dict[str, str] | None = None) -> None:
        self.name = name
        self.observations: list[Observation] = []
        self.noise: list[str] = []  # stdout lines that are not observations (a client's own prints)
        self._changed = threading.Condition()
        # Closed in stop(); a file (not a pipe) so a chatty client never blocks on it.
        self._stderr: IO[str] = tempfile.TemporaryFile("w+")  # noqa: SIM115
        self.process = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            text=True,
            env=env,
            cwd=REPO_ROOT,
        )
        self._reader = threading.Thread(target=self._read, name=f"{name}-stdout", daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            try:
                observation = Observation.parse(line)
            except (ValueError, KeyError):
                self.noise.append(line.rstrip("\n"))
                continue
            with self._changed:
                self.observations.append(observation)
                self._changed.notify_all()
        with self._changed:
            self._changed.notify_all()

    def snapshot(self) -> list[Observation]:
        with self._changed:
            return list(self.observations)

    def events(self, event: str) -> list[Observation]:
        return [obs for obs in self.snapshot() if obs.event == event]

    def last(self, event: str) -> Observation | None:
        found = self.events(event)
        return found[-1] if found else None

    def wait_for(self, predicate: Callable[[Observation], bool], timeout_s: float) -> Observation:
        """The first observation (already seen or yet to come) matching `predicate`."""
        deadline = time.monotonic() + timeout_s
        seen = 0
        with self._changed:
            while True:
                for observation in self.observations[seen:]:
                    if predicate(observation):
                        return observation
                seen = len(self.observations)
                remaining = deadline - time.monotonic()
                if remaining <= 0 or (not self._reader.is_alive() and seen == len(self.observations)):
                    raise DriverFailed(
                        f"{self.name}: no matching observation in {timeout_s}s\n{self.diagnosis()}"
                    )
                self._changed.wait(min(remaining, 0.5))

    @property
    def running(self) -> bool:
        return self.process.poll() is None

    def close(self, timeout_s: float = 30.0) -> list[Observation]:
        """Ask the driver to close (a member leaves its group) and wait for it to exit."""
        if self.running and self.process.stdin is not None:
            with contextlib.suppress(BrokenPipeError):
                self.process.stdin.write("close\n")
                self.process.stdin.flush()
        return self.finish(timeout_s)

    def kill(self) -> None:
        """SIGKILL: the member vanishes without a LeaveGroup, as a crashed process would."""
        if self.running:
            self.process.send_signal(signal.SIGKILL)
        self.process.wait(timeout=10)
        self._reader.join(timeout=10)

    def finish(self, timeout_s: float) -> list[Observation]:
        """Wait for exit; raise DriverFailed unless it exited 0 without an ``error``."""
        try:
            self.process.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            self.kill()
            raise DriverFailed(f"{self.name}: still running after {timeout_s}s\n{self.diagnosis()}") from None
        self._reader.join(timeout=10)
        if self.process.returncode != 0 or self.events("error"):
            raise DriverFailed(
                f"{self.name}: exited {self.process.returncode}: {self.first_error()}\n{self.diagnosis()}"
            )
        return self.snapshot()

    def stderr_tail(self, limit: int = 4000) -> str:
        self._stderr.seek(0)
        return self._stderr.read()[-limit:]

    def first_error(self) -> str:
        """The client's own error message, for the first line of a failure."""
        errors = self.events("error")
        return str(errors[0]["message"]) if errors else "(no error observation)"

    def diagnosis(self) -> str:
        errors = [obs["message"] for obs in self.events("error")]
        return f"errors: {errors}\nstderr (tail):\n{self.stderr_tail()}"

    def stop(self) -> None:
        """Cleanup: never leave a driver behind, whatever state it is in."""
        if self.running:
            self.kill()
        if self.process.stdin is not None:
            with contextlib.suppress(BrokenPipeError):
                self.process.stdin.close()
        self._stderr.close()

    def __enter__(self) -> DriverProcess:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()


ALL_ASSIGNORS: tuple[Assignor, ...] = ("range", "roundrobin", "cooperative-sticky")


@dataclass(frozen=True)
class Driver:
    """One client: how to tell it is available, how to start its driver, and what it can do.

    The capability fields say why a scenario does not apply to this client (None: it does);
    the harness reports those scenarios as n/a with the reason, it never runs a substitute.
    """

    name: str
    build_argv: Callable[[str], list[str]]
    check_available: Callable[[], str | None]
    env: Callable[[], dict[str, str]] | None = None
    assignors: tuple[Assignor, ...] = ALL_ASSIGNORS
    no_static_members: str | None = None
    no_admin: str | None = None
    no_transactions: str | None = None
    librdkafka: bool = False  # built on librdkafka (one of the mixed group's kinds of member)

    def assignor_missing(self, assignor: Assignor) -> str | None:
        if assignor in self.assignors:
            return None
        return f"{self.name} has no {assignor} assignor (it has: {', '.join(self.assignors)})"

    def default_assignor(self) -> Assignor:
        return "range" if "range" in self.assignors else self.assignors[0]

    def missing(self) -> str | None:
        """Why this client cannot run here, or None when it can."""
        return self.check_available()

    def start(self, command: Command) -> DriverProcess:
        reason = self.missing()
        if reason is not None:
            raise DriverFailed(f"{self.name} unavailable: {reason}")
        return DriverProcess(self.name, self.build_argv(command.to_json()), self.env() if self.env else None)

    def run(self, command: Command, timeout_s: float | None = None) -> list[Observation]:
        """Run one command to completion and return its observations."""
        with self.start(command) as driver:
            return driver.finish(timeout_s if timeout_s is not None else command.timeout_s + 30)


def _python_env() -> dict[str, str]:
    # The drivers import `compat`, which is not an installed package: run them from the repo.
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO_ROOT), env.get("PYTHONPATH")]))
    return env


def _python_argv(module: str) -> Callable[[str], list[str]]:
    return lambda command_json: [sys.executable, "-m", module, command_json]


def _python_missing(*libraries: str, tools: tuple[str, ...] = ()) -> Callable[[], str | None]:
    def check() -> str | None:
        for library in libraries:
            if importlib.util.find_spec(library) is None:
                return f"Python package {library!r} is not installed (pip install -e '.[test]')"
        for tool in tools:
            if shutil.which(tool) is None:
                return f"{tool} is not on PATH (apt-get install {tool})"
        return None

    return check


def _wheel_librdkafka_env() -> dict[str, str]:
    env = _python_env()
    env["LD_LIBRARY_PATH"] = os.pathsep.join(
        filter(None, [str(librdkafka.library_dir()), env.get("LD_LIBRARY_PATH")])
    )
    return env


def _kcat_wheel_missing() -> str | None:
    try:
        librdkafka.wheel_library()
    except librdkafka.BundledLibrdkafkaMissing as exc:
        return str(exc)
    return _python_missing("confluent_kafka", tools=("kcat",))()


KCAT_NO_ADMIN = "kcat has no admin operations (no topic or group administration)"
KCAT_NO_TRANSACTIONS = "kcat has no transactional producer"


def _node_missing() -> str | None:
    if shutil.which("node") is None:
        return "node is not on PATH"
    if not (COMPAT_DIR / "node" / "node_modules" / "kafkajs").is_dir():
        return "kafkajs is not installed: run `npm ci` in compat/node"
    return None


def _node_argv(command_json: str) -> list[str]:
    return [shutil.which("node") or "node", str(NODE_DRIVER), command_json]


def _java_missing() -> str | None:
    try:
        java_build.compiled_classpath()
    except java_build.JavaDriverUnavailable as exc:
        return str(exc)
    if shutil.which("java") is None:
        return "java is not on PATH (a JDK 17+ is needed for the Java driver)"
    return None


DRIVERS: dict[str, Driver] = {
    driver.name: driver
    for driver in (
        Driver(
            "kafka-python", _python_argv("compat.clients.kafka_python"), _python_missing("kafka"), _python_env
        ),
        Driver(
            "confluent-kafka",
            _python_argv("compat.clients.confluent"),
            _python_missing("confluent_kafka"),
            _python_env,
            librdkafka=True,
        ),
        Driver(
            "aiokafka",
            _python_argv("compat.clients.aiokafka_client"),
            _python_missing("aiokafka"),
            _python_env,
            assignors=("range", "roundrobin"),
        ),
        # Debian's kcat on Debian's librdkafka (2.0.2 on bookworm).
        Driver(
            "kcat",
            _python_argv("compat.clients.kcat"),
            _python_missing("confluent_kafka", tools=("kcat",)),
            _python_env,
            no_admin=KCAT_NO_ADMIN,
            no_transactions=KCAT_NO_TRANSACTIONS,
            librdkafka=True,
        ),
        # The same kcat on the newest librdkafka here: the one in the confluent-kafka wheel.
        Driver(
            "kcat-newest",
            _python_argv("compat.clients.kcat"),
            _kcat_wheel_missing,
            _wheel_librdkafka_env,
            no_admin=KCAT_NO_ADMIN,
            no_transactions=KCAT_NO_TRANSACTIONS,
            librdkafka=True,
        ),
        Driver(
            "kafkajs",
            _node_argv,
            _node_missing,
            assignors=("roundrobin",),
            no_static_members="kafkajs 2.2.4 has no static membership (group.instance.id)",
        ),
        Driver("java", java_build.driver_command_line, _java_missing),
    )
}
