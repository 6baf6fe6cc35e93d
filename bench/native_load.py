"""Produce and consume MB/s from the Java client (compat/java/PerfDriver.java), kafka-shim
beside Tansu in the same run: 1, 4 and 16 producers x 100 B and 10 KB records, acks=all,
then one consumer reading back the 1-producer topics. Medians of interleaved rounds.

    python -m bench.native_load [--megabytes 16] [--rounds 3]

A JVM load generator rather than a Python one: the client must not be the bottleneck.
Each point writes to a fresh topic with one partition per producer. Timing is taken inside
the JVM (start-up excluded), from the first send until every record is acknowledged.
"""

from __future__ import annotations

import argparse
import subprocess
import uuid
from statistics import median

from bench.commits import create_topic
from bench.common import measure_interleaved, print_row
from compat.java_build import compiled_classpath
from compat.targets import Broker

PRODUCERS = (1, 4, 16)
RECORD_BYTES = (100, 10 * 1024)


def perf_driver(*args: object) -> tuple[int, float]:
    """Run PerfDriver; (bytes, seconds) from its one line."""
    argv = ["java", "-Xmx512m", "-cp", compiled_classpath(), "PerfDriver", *map(str, args)]
    result = subprocess.run(argv, capture_output=True, text=True, timeout=300)
    lines = [line for line in result.stdout.splitlines() if line.startswith("records ")]
    if result.returncode != 0 or not lines:
        raise RuntimeError(f"PerfDriver {args[0]} failed ({result.returncode}):\n{result.stderr[-2000:]}")
    _, _, size, seconds = lines[-1].split()
    return int(size), float(seconds)


def mb_per_s(size: int, seconds: float) -> float:
    return size / seconds / 1e6


def one_round(broker: Broker, megabytes: float) -> dict[str, float]:
    results: dict[str, float] = {}
    for record_bytes in RECORD_BYTES:
        for producers in PRODUCERS:
            topic = f"bench-native-{uuid.uuid4().hex[:8]}"
            create_topic(broker.bootstrap, topic, producers)
            per_producer = max(1, int(megabytes * 1e6 / record_bytes / producers))
            size, seconds = perf_driver(
                "produce", broker.bootstrap, topic, producers, record_bytes, per_producer
            )
            results[f"produce {producers:>2} x {record_bytes:>5} B acks=all"] = mb_per_s(size, seconds)
            if producers == 1:
                size, seconds = perf_driver("consume", broker.bootstrap, topic, per_producer)
                results[f"consume 1 x {record_bytes:>5} B"] = mb_per_s(size, seconds)
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--megabytes", type=float, default=16.0, help="record bytes written per point")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    samples = measure_interleaved(lambda broker: one_round(broker, args.megabytes), args.rounds)
    points = next(iter(samples.values()))[0]
    for point in points:
        row = {name: median(run[point] for run in runs) for name, runs in samples.items()}
        print_row(f"{point} (median)", row, "MB/s", True)


if __name__ == "__main__":
    main()
