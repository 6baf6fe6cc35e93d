"""Container start to first answer: seconds from starting the container (testcontainers,
the host port published, the broker told to advertise it) to the first ApiVersions answered
through the mapped port. kafka-shim's image through `KafkaShimContainer` beside the official
`apache/kafka` image where that image exists (its column says why not otherwise).

    python -m bench.container_start [--runs 5]
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from statistics import median

from bench.common import print_row
from bench.startup import answered
from compat.targets import KAFKA_IMAGE, Broker, TargetUnavailable, start_kafka, start_shim_docker

TARGETS: dict[str, Callable[[], Broker]] = {"kafka-shim-docker": start_shim_docker, "kafka": start_kafka}


def start_to_first_answer(start: Callable[[], Broker], timeout_s: float = 120.0) -> float:
    started = time.perf_counter()
    broker = start()
    try:
        port = int(broker.bootstrap.rsplit(":", 1)[1])
        while not answered(port):
            if time.perf_counter() - started > timeout_s:
                raise RuntimeError(f"{broker.name}: no ApiVersions answer within {timeout_s}s")
            time.sleep(0.005)
        return time.perf_counter() - started
    finally:
        broker.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    samples: dict[str, list[float]] = {}
    missing: dict[str, str] = {}
    for _ in range(args.runs):  # interleaved, so machine noise hits both alike
        for name, start in TARGETS.items():
            if name in missing:
                continue
            try:
                samples.setdefault(name, []).append(start_to_first_answer(start))
            except TargetUnavailable as exc:
                missing[name] = str(exc).splitlines()[0][:160]
    for name, reason in missing.items():
        image = KAFKA_IMAGE if name == "kafka" else name
        print(f"  {name}: no column ({image}: {reason})")
    measured = {name: values for name, values in samples.items() if values}
    print_row(
        "container start to ApiVersions (median)",
        {k: median(v) * 1000 for k, v in measured.items()},
        "ms",
        higher_is_better=False,
    )
    print_row(
        "container start to ApiVersions (max)",
        {k: max(v) * 1000 for k, v in measured.items()},
        "ms",
        higher_is_better=False,
    )


if __name__ == "__main__":
    main()
