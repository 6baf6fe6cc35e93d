"""The Kafka listener answers first: nothing Kafka clients do not need is imported before the
broker's first answer (docs/performance.md, start-up). Not a timing test: the broker runs as a
user starts it, under `python -X importtime`, whose lines share one pipe with the broker's log,
so what was imported before the ApiVersions answer is read in order; the console must still
come up after it."""

from __future__ import annotations

import os
import re
import select
import socket
import struct
import subprocess
import sys
import time
from pathlib import Path

import pytest

# Heavy, and none of them needed to answer Kafka on a plaintext listener: the console's web
# stack and metrics, the HTTP control endpoint, TLS and SASL machinery (the
# credential store, hashlib and json, is the broker's state and stays), client libraries and
# the Java-facing pieces. (ssl itself is imported by Trio on every start, so it is not listed.)
HEAVY = (
    "hypercorn",
    "starlette",
    "prometheus_client",
    "anyio",
    "h11",
    "h2",
    "wsproto",
    "cryptography",
    "scramp",
    "confluent_kafka",
    "kafka",
    "aiokafka",
    "jpype",
    "pyspark",
    "pyarrow",
    "kafka_shim.shim.web.console",
    "kafka_shim.shim.schema_registry",
    "kafka_shim.shim.web.metrics",
    "kafka_shim.shim.web.http_server",
    "kafka_shim.shim.testbroker.control_server",
    "kafka_shim.shim.security.tls",
    "kafka_shim.shim.security.sasl",
    "kafka_shim.shim.security.dev_certs",
    "kafka_shim.pipeline",
)
# Needed by Kafka clients, but not by the first answer: the coordinators (and the state they
# replay) load on first use or once the listener has answered (shim.coordinator_loading), fetch
# sessions with the first Fetch. (Their packages' light modules, such as the groups' journal
# and the share-group configs a group's configs are read with, load at start.)
LOADED_AFTER = (
    "kafka_shim.shim.coordinator.coordinator",
    "kafka_shim.shim.coordinator.consumer",
    "kafka_shim.shim.groups.service",
    "kafka_shim.shim.groups.effects",
    "kafka_shim.shim.share.service",
    "kafka_shim.shim.transactions",
    "kafka_shim.shim.partitions.fetch_sessions",
    "kafka_shim.storage.offsets_log",
    "kafka_shim.storage.transaction_log",
    "kafka_shim.storage.share_state_log",
    "kafka_shim.shim.coordinator.share.partition",  # with the first share group
)
# What only a data directory needs: `--memory` starts without them.
DISK_ONLY = (
    "kafka_shim.storage.disk_store",
    "kafka_shim.storage.disk_log",
    "kafka_shim.storage.log_recovery",
    "kafka_shim.storage.housekeeping",
)
# ApiVersions v0: header v1 (api key 18, version 0, correlation 7, null client id), no body.
API_VERSIONS_V0 = struct.pack(">ihhih", 10, 18, 0, 7, -1)
DEADLINE_S = 30.0


def heavy(module: str, names: tuple[str, ...] = HEAVY) -> bool:
    return any(module == name or module.startswith(name + ".") for name in names)


class Output:
    """The broker's merged stdout and stderr, line by line, with a deadline."""

    def __init__(self, process: subprocess.Popen[bytes]) -> None:
        assert process.stdout is not None
        self._pipe = process.stdout
        self._poll = select.poll()
        self._poll.register(self._pipe, select.POLLIN)
        self._pending = b""
        self.lines: list[str] = []

    def until(self, marker: str) -> str:
        deadline = time.monotonic() + DEADLINE_S
        while True:
            while b"\n" in self._pending:
                raw, self._pending = self._pending.split(b"\n", 1)
                line = raw.decode(errors="replace")
                self.lines.append(line)
                if marker in line:
                    return line
            left = deadline - time.monotonic()
            # poll, not select: a test process that has opened many files gets descriptors
            # past select's 1,024.
            if left <= 0 or not self._poll.poll(left * 1000):
                raise AssertionError(
                    f"no line with {marker!r} within {DEADLINE_S}s:\n" + "\n".join(self.lines[-30:])
                )
            chunk = os.read(self._pipe.fileno(), 65536)
            if not chunk:
                raise AssertionError(f"the broker exited before {marker!r}:\n" + "\n".join(self.lines[-30:]))
            self._pending += chunk

    def imported(self) -> list[str]:
        """Modules imported so far, in order (`-X importtime`'s lines)."""
        return [line.rsplit("|", 1)[1].strip() for line in self.lines if line.startswith("import time:")]


def answer_api_versions(port: int) -> None:
    with socket.create_connection(("127.0.0.1", port), timeout=DEADLINE_S) as sock:
        sock.sendall(API_VERSIONS_V0)
        size, correlation = struct.unpack(">ii", sock.recv(8, socket.MSG_WAITALL))
        assert correlation == 7 and size > 4


@pytest.mark.parametrize("storage", ["memory", "disk"])
def test_nothing_heavy_is_imported_before_the_first_kafka_answer(storage: str, tmp_path: Path) -> None:
    store = ["--memory"] if storage == "memory" else ["--data-dir", str(tmp_path / "data")]
    argv = [sys.executable, "-X", "importtime", "-m", "kafka_shim", *store, "--host", "127.0.0.1"]
    # The default console and schema registry (on free ports); DEBUG, whose request trace
    # marks the answer.
    argv += [
        "--port",
        "0",
        "--console",
        "127.0.0.1:0",
        "--schema-registry",
        "127.0.0.1:0",
        "--log-level",
        "DEBUG",
    ]
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    process = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env)
    try:
        output = Output(process)
        listening = re.search(r"listening on 127\.0\.0\.1:(\d+)", output.until("kafka-shim listening on"))
        assert listening is not None
        port = int(listening.group(1))
        answer_api_versions(port)
        output.until("ApiVersions v0 from")  # logged as the answer is sent
        before = output.imported()
        assert before, "no -X importtime lines: the guard would see nothing"
        loaded_early = [module for module in before if heavy(module)]
        assert not loaded_early, f"imported before the Kafka listener answered: {loaded_early}"
        loaded_early = [module for module in before if heavy(module, LOADED_AFTER)]
        assert not loaded_early, f"loaded before the Kafka listener answered: {loaded_early}"
        if storage == "memory":
            loaded = [module for module in before if heavy(module, DISK_ONLY)]
            assert not loaded, f"loaded by an in-memory broker: {loaded}"
        output.until("console on http://")  # and the console still comes up, after it
        assert any(heavy(module) for module in output.imported()[len(before) :])
    finally:
        process.terminate()
        process.wait(timeout=10)
