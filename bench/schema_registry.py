"""The dev stack's start-up: milliseconds from spawning `kafka-shim` to a schema registered
through its built-in registry (a POST /subjects/{s}/versions answered 200), beside the time to
the broker's first answered ApiVersions with the registry off, and Tansu's first answer, all
in the same run, interleaved, medians of the runs.

    python -m bench.schema_registry [--runs 5]

The registry's figure is what a test suite waits for before its first Avro producer can run:
Kafka listener up, the registry's stack imported and served, the `_schemas` topic created and
the schema's record appended, in memory here (`--memory`), as the fixture runs.
Confluent's own registry, a JVM that must also find its broker, takes 5-10 s (its docs and
compose files wait for it); it does not run here (no JVM registry image reaches this machine).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from statistics import median

from bench.common import print_row, process_cpu_s
from bench.startup import installed_like_env, time_to_first_answer
from compat.targets import REPO_ROOT, free_port, tansu_argv, tansu_binary

SCHEMA = json.dumps({"type": "record", "name": "Order", "fields": [{"name": "id", "type": "long"}]})
MEDIA = "application/vnd.schemaregistry.v1+json"


def registered(url: str) -> bool:
    request = urllib.request.Request(
        f"{url}/subjects/orders-value/versions",
        data=json.dumps({"schema": SCHEMA}).encode(),
        headers={"Content-Type": MEDIA},
        method="POST",
    )
    try:
        with urllib.request.urlopen(request, timeout=2) as answer:
            return bool(answer.status == 200 and json.loads(answer.read()) == {"id": 1})
    except (urllib.error.URLError, ConnectionError, TimeoutError):
        return False


def shim_argv(port: int, registry: str) -> list[str]:
    kafka = ["--memory", "--host", "127.0.0.1", "--port", str(port)]
    return [sys.executable, "-m", "kafka_shim", *kafka, "--console", "off", "--schema-registry", registry]


def time_to_registered_schema(env: dict[str, str], timeout_s: float = 30.0) -> tuple[float, float]:
    """(wall seconds, the process's CPU seconds) from spawning to the schema's id answered."""
    port, registry_port = free_port(), free_port()
    argv = shim_argv(port, f"127.0.0.1:{registry_port}")
    url = f"http://127.0.0.1:{registry_port}"
    started = time.perf_counter()
    process = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    try:
        while time.perf_counter() - started < timeout_s:
            if registered(url):
                return time.perf_counter() - started, process_cpu_s(process.pid)
            if process.poll() is not None:
                said = process.stderr.read().decode(errors="replace") if process.stderr else ""
                raise RuntimeError(f"{' '.join(argv)} exited with {process.returncode}: {said[-2000:]}")
            time.sleep(0.005)
        raise RuntimeError(f"no schema registered within {timeout_s}s")
    finally:
        process.terminate()
        process.wait(timeout=10)


def measure(runs: int) -> dict[str, dict[str, float]]:
    """{label: {broker: median ms}}, wall clock and the process's CPU; Tansu's first answer
    stands beside each (it serves no Confluent registry API)."""
    env = installed_like_env(REPO_ROOT)

    def broker_alone() -> tuple[float, float]:
        port = free_port()
        return time_to_first_answer(shim_argv(port, "off"), port, env)

    def tansu() -> tuple[float, float]:
        port = free_port()
        return time_to_first_answer(tansu_argv(tansu_binary(), port), port, env)

    ways: dict[str, Callable[[], tuple[float, float]]] = {
        "to a registered schema": lambda: time_to_registered_schema(env),
        "broker alone, first answer": broker_alone,
        "tansu": tansu,
    }
    samples: dict[str, list[tuple[float, float]]] = {name: [] for name in ways}
    for _ in range(runs):  # interleaved, so the machine's noise falls on all alike
        for name, way in ways.items():
            samples[name].append(way())
    peer = samples.pop("tansu")
    figures: dict[str, dict[str, float]] = {}
    for label, values in samples.items():
        for index, kind in ((0, "wall"), (1, "CPU")):
            figures[f"{label} ({kind})"] = {
                "shim": median(v[index] for v in values) * 1000,
                "tansu": median(v[index] for v in peer) * 1000,
            }
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    for label, figures in measure(args.runs).items():
        print_row(label, figures, "ms", higher_is_better=False)


if __name__ == "__main__":
    main()
