"""Start-up: milliseconds from spawning the broker process to its first answered
ApiVersions, kafka-shim beside Tansu, same run, median of the runs (target for
kafka-shim: < 250 ms with the default console on).

    python -m bench.startup [--runs 5]

kafka-shim starts three ways, interleaved with Tansu so the machine's noise falls on
all alike: `--memory` with the console and schema registry on (their defaults), `--memory
--console off --schema-registry off`,
and on disk holding 100 topics (console on).
"""

from __future__ import annotations

import argparse
import compileall
import os
import socket
import struct
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from statistics import median

from bench.common import print_row
from compat.targets import REPO_ROOT, free_port, tansu_argv, tansu_binary

# ApiVersions v0 request: header v1 (key 18, version 0, correlation 1, null client id), empty body.
API_VERSIONS_V0 = struct.pack(">ihhih", 10, 18, 0, 1, -1)
DISK_TOPICS = 100


def answered(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5) as sock:
            sock.sendall(API_VERSIONS_V0)
            header = sock.recv(8)
            return len(header) == 8 and struct.unpack(">ii", header)[1] == 1
    except OSError:
        return False


def installed_like_env() -> dict[str, str]:
    """Start the broker as a pip-installed one starts: with its bytecode
    compiled (pip compiles at install), not recompiling every module from
    source, which PYTHONDONTWRITEBYTECODE in some environments would force."""
    compileall.compile_dir(REPO_ROOT / "protocol", quiet=1)
    compileall.compile_dir(REPO_ROOT / "shim", quiet=1)
    compileall.compile_dir(REPO_ROOT / "storage", quiet=1)
    return {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def time_to_first_answer(argv: list[str], port: int, env: dict[str, str], timeout_s: float = 30.0) -> float:
    started = time.perf_counter()
    process = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    try:
        while time.perf_counter() - started < timeout_s:
            if answered(port):
                return time.perf_counter() - started
            if process.poll() is not None:
                said = process.stderr.read().decode(errors="replace") if process.stderr else ""
                raise RuntimeError(f"{' '.join(argv)} exited with {process.returncode}: {said[-2000:]}")
            time.sleep(0.002)
        raise RuntimeError(f"no ApiVersions answer within {timeout_s}s")
    finally:
        process.terminate()
        process.wait(timeout=10)


def shim_argv(port: int, *extra: str) -> list[str]:
    # The console and schema registry on free ports: their defaults (8080, 8081) may be taken
    # here, and one that cannot bind still costs its imports, but the figure includes serving.
    console = (
        ["--console", "127.0.0.1:0", "--schema-registry", "127.0.0.1:0"] if "--console" not in extra else []
    )
    storage = [] if "--data-dir" in extra else ["--memory"]
    argv = [sys.executable, "-m", "kafka_shim", *storage, "--host", "127.0.0.1", "--port", str(port)]
    return argv + console + list(extra)


def data_dir_with_topics(parent: Path, topics: int = DISK_TOPICS) -> Path:
    """A data directory holding `topics` one-partition topics, each with a record,
    written by the broker itself (in-process) and closed before the runs."""
    from confluent_kafka import Producer
    from confluent_kafka.admin import AdminClient, NewTopic

    from kafka_shim.shim.config import BrokerConfig
    from kafka_shim.shim.server import BrokerThread

    data_dir = parent / "data"
    broker = BrokerThread(BrokerConfig(port=0, data_dir=data_dir, console_listener=None)).start()
    try:
        names = [f"startup-{n}" for n in range(topics)]
        admin = AdminClient({"bootstrap.servers": broker.bootstrap})
        for future in admin.create_topics([NewTopic(name, 1, 1) for name in names]).values():
            future.result(timeout=30)
        producer = Producer({"bootstrap.servers": broker.bootstrap})
        for name in names:
            producer.produce(name, b"x" * 100)
        if producer.flush(30):
            raise RuntimeError("records not delivered while preparing the data directory")
    finally:
        broker.stop()
        broker.broker.close()  # its data directory's lock too
    return data_dir


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    for label, figures in measure(args.runs).items():
        print_row(f"start-up: {label}", figures, "ms", higher_is_better=False)


def measure(runs: int) -> dict[str, dict[str, float]]:
    """Median milliseconds to the first answer, per way of starting: {label: {broker: ms}};
    Tansu (memory storage) is started in every round and stands beside each label."""
    env = installed_like_env()
    with tempfile.TemporaryDirectory(prefix="startup-bench-") as tmp:
        data_dir = data_dir_with_topics(Path(tmp))
        starts: dict[str, Callable[[int], list[str]]] = {
            "memory, console": shim_argv,
            "memory, --console off": lambda port: shim_argv(
                port, "--console", "off", "--schema-registry", "off"
            ),
            f"disk {DISK_TOPICS} topics, console": lambda port: shim_argv(port, "--data-dir", str(data_dir)),
            "tansu": lambda port: tansu_argv(tansu_binary(), port),
        }
        samples: dict[str, list[float]] = {name: [] for name in starts}
        for _ in range(runs):  # interleaved, so machine noise hits all alike
            for name, argv in starts.items():
                port = free_port()
                samples[name].append(time_to_first_answer(argv(port), port, env))
    tansu = median(samples.pop("tansu")) * 1000
    return {label: {"shim": median(values) * 1000, "tansu": tansu} for label, values in samples.items()}


if __name__ == "__main__":
    main()
