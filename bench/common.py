"""Shared by the benchmarks: start each broker the same way, print side by side."""

from __future__ import annotations

import statistics
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from compat.targets import TARGETS, RunningBroker, TargetUnavailable

BROKERS = ("shim", "tansu")


@contextmanager
def running(name: str) -> Iterator[RunningBroker]:
    broker = TARGETS[name]()
    try:
        yield broker
    finally:
        broker.stop()


def measure_each(
    measure: Callable[[RunningBroker], float], brokers: tuple[str, ...] = BROKERS
) -> dict[str, float]:
    """One fresh broker per target; a target that cannot start is reported, not fatal."""
    results: dict[str, float] = {}
    for name in brokers:
        try:
            with running(name) as broker:
                results[name] = measure(broker)
        except TargetUnavailable as exc:
            print(f"  {name}: unavailable ({str(exc).splitlines()[0]})")
    return results


def print_row(label: str, results: dict[str, float], unit: str, higher_is_better: bool) -> None:
    cells = "  ".join(f"{name} {value:>12,.1f}" for name, value in results.items())
    ratio = ""
    if "shim" in results and "tansu" in results and results["tansu"]:
        ratio = f"  shim/tansu {results['shim'] / results['tansu']:.2f}x"
    better = "higher" if higher_is_better else "lower"
    print(f"{label:<34}{cells}  {unit} ({better} is better){ratio}", flush=True)


def median(values: list[float]) -> float:
    return statistics.median(values)
