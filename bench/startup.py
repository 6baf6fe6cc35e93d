"""Start-up: milliseconds from spawning the broker process to its first answered
ApiVersions, kafka-shim beside Tansu, same run, median of the runs (target for
kafka-shim: < 250 ms with the default console on), and the CPU time the process used by then
(the kernel's CPU clock of the process, in nanoseconds; it holds still when other work makes
the wall clock wait for a core).

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

from bench.common import cli_source, print_row, process_cpu_s
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


def installed_like_env(tree: Path) -> dict[str, str]:
    """Start the broker as a pip-installed one starts: with its bytecode
    compiled (pip compiles at install), not recompiling every module from
    source, which PYTHONDONTWRITEBYTECODE in some environments would force."""
    # Older checkouts link kafka_shim/<layer> to top-level folders, which compileall skips.
    for folder in ("kafka_shim", "protocol", "shim", "storage"):
        if (tree / folder).is_dir():
            compileall.compile_dir(tree / folder, quiet=1)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    if tree != REPO_ROOT:  # PYTHONSAFEPATH: `python -m` would import this checkout first
        env.update({"PYTHONPATH": str(tree), "PYTHONSAFEPATH": "1"})
    return env


def time_to_first_answer(
    argv: list[str], port: int, env: dict[str, str], timeout_s: float = 30.0
) -> tuple[float, float]:
    """(wall seconds, the process's CPU seconds) from spawning to the first answer. The CPU
    figure holds still on a loaded machine, where the wall clock waits for a core."""
    started = time.perf_counter()
    process = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    try:
        while time.perf_counter() - started < timeout_s:
            if answered(port):
                return time.perf_counter() - started, process_cpu_s(process.pid)
            if process.poll() is not None:
                said = process.stderr.read().decode(errors="replace") if process.stderr else ""
                raise RuntimeError(f"{' '.join(argv)} exited with {process.returncode}: {said[-2000:]}")
            time.sleep(0.002)
        raise RuntimeError(f"no ApiVersions answer within {timeout_s}s")
    finally:
        process.terminate()
        process.wait(timeout=10)


def shim_tree() -> Path:
    """The checkout kafka-shim runs from: another one given by PYTHONPATH with PYTHONSAFEPATH
    (as `python -m bench --shim-tree` sets them), else this one."""
    other = os.environ.get("PYTHONPATH") if os.environ.get("PYTHONSAFEPATH") else None
    return Path(other) if other else REPO_ROOT


def shim_argv(tree: Path, port: int, console: bool = True, data_dir: Path | None = None) -> list[str]:
    """The console and schema registry on free ports when on (their defaults, 8080 and 8081,
    may be taken here; one that cannot bind still costs its imports, but the figure includes
    serving); a checkout without a schema registry runs without."""
    storage = ["--memory"] if data_dir is None else ["--data-dir", str(data_dir)]
    argv = [sys.executable, "-m", "kafka_shim", *storage, "--host", "127.0.0.1", "--port", str(port)]
    argv += ["--console", "127.0.0.1:0" if console else "off"]
    if '"--schema-registry"' in cli_source(tree):  # older ones have none
        argv += ["--schema-registry", "127.0.0.1:0" if console else "off"]
    return argv


def data_dir_with_topics(parent: Path, topics: int = DISK_TOPICS) -> Path:
    """A data directory holding `topics` one-partition topics, each with a record,
    written by the broker itself (in-process) and closed before the runs."""
    from confluent_kafka import Producer
    from confluent_kafka.admin import AdminClient, NewTopic

    from kafka_shim.shim.config.broker_config import BrokerConfig
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
    parser.add_argument(
        "--before-tree",
        type=Path,
        metavar="DIR",
        help="also start kafka-shim from this checkout, as 'before'",
    )
    parser.add_argument(
        "--topics", type=int, default=DISK_TOPICS, help="one-partition topics on disk (default %(default)s)"
    )
    args = parser.parse_args()
    load_before = os.getloadavg()[0]
    for label, figures in measure(args.runs, args.before_tree, args.topics).items():
        print_row(f"start-up: {label}", figures, "ms", higher_is_better=False)
    # The wall figures follow the machine's load (the CPU ones hold still): say what it was.
    print(f"load average (1 min) {load_before:.1f} before the runs, {os.getloadavg()[0]:.1f} after")


def measure(runs: int, before: Path | None = None, topics: int = DISK_TOPICS) -> dict[str, dict[str, float]]:
    """Median milliseconds to the first answer, wall clock and CPU, per way of starting:
    {label: {broker: ms}}; Tansu (memory storage) is started in every round and stands beside
    each label, and so does kafka-shim from the `before` checkout if given."""
    trees = {"shim": shim_tree(), **({"before": before.resolve()} if before is not None else {})}
    envs = {name: installed_like_env(tree) for name, tree in trees.items()}
    ways: dict[str, Callable[[Path, int, Path], list[str]]] = {
        "memory, console": lambda tree, port, _: shim_argv(tree, port),
        "memory, --console off": lambda tree, port, _: shim_argv(tree, port, console=False),
        f"disk {topics} topics, console": lambda tree, port, data: shim_argv(tree, port, data_dir=data),
    }
    samples: dict[tuple[str, str], list[tuple[float, float]]] = {}
    with tempfile.TemporaryDirectory(prefix="startup-bench-") as tmp:
        data_dir = data_dir_with_topics(Path(tmp), topics)
        for _ in range(runs):  # interleaved, so machine noise hits all alike
            for label, argv in ways.items():
                for name, tree in trees.items():
                    port = free_port()
                    answer = time_to_first_answer(argv(tree, port, data_dir), port, envs[name])
                    samples.setdefault((label, name), []).append(answer)
            port = free_port()
            answer = time_to_first_answer(tansu_argv(tansu_binary(), port), port, envs["shim"])
            samples.setdefault(("", "tansu"), []).append(answer)
    figures: dict[str, dict[str, float]] = {}
    for label in ways:
        for index, what in ((0, ""), (1, ", CPU")):
            figures[label + what] = {
                name: median(sample[index] for sample in samples[label if name != "tansu" else "", name])
                * 1000
                for name in (*trees, "tansu")
            }
    return figures


if __name__ == "__main__":
    main()
