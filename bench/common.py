"""Shared by the benchmarks: start each broker the same way, print side by side."""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import TypeVar

from compat.targets import TARGETS, Broker, RunningBroker, TargetUnavailable, launch, start_shim

BROKERS = ("shim", "tansu")
T = TypeVar("T")


# The kernel's CPU clock of a whole process, as clock_getcpuclockid(3) makes its id: the pid
# complemented, shifted past the clock kind's three bits, kind 2 (CPUCLOCK_SCHED, in ns).
_CPUCLOCK_SCHED = 2


def process_cpu_ns(pid: int) -> int:
    """CPU nanoseconds the process has used so far: every thread it ever ran, those that have
    exited included (Trio's cached worker threads come and go), from the kernel's per-process
    CPU clock. /proc's utime + stime count the same in 10 ms ticks; each live thread's schedstat
    loses the threads that exited."""
    return time.clock_gettime_ns(((~pid) << 3) | _CPUCLOCK_SCHED)


def process_cpu_s(pid: int) -> float:
    """process_cpu_ns in seconds."""
    return process_cpu_ns(pid) / 1e9


def main_thread_cpu_ns(pid: int) -> int:
    """CPU nanoseconds the process's main thread has run so far (its schedstat), finer than ticks."""
    return int(Path(f"/proc/{pid}/task/{pid}/schedstat").read_text().split()[0])


@contextmanager
def running(name: str, start: Callable[[], Broker] | None = None) -> Iterator[Broker]:
    broker = (start or TARGETS[name])()
    try:
        yield broker
    finally:
        broker.stop()


def measure_interleaved(
    measure: Callable[[Broker], T],
    rounds: int,
    brokers: tuple[str, ...] = BROKERS,
    starters: Mapping[str, Callable[[], Broker]] | None = None,
) -> dict[str, list[T]]:
    """Every broker runs for the whole measurement and rounds alternate between
    them, so the machine's noise falls on all of them alike. A target that
    cannot start is reported, not fatal. `starters`: brokers started otherwise than their
    target's default (a kafka-shim with other flags), by the name their samples go under."""
    samples: dict[str, list[T]] = {}
    with ExitStack() as stack:
        started: list[Broker] = []
        for name in brokers:
            try:
                started.append(stack.enter_context(running(name, (starters or {}).get(name))))
            except TargetUnavailable as exc:
                print(f"  {name}: unavailable ({str(exc).splitlines()[0]})")
        for _ in range(rounds):
            for broker in started:
                samples.setdefault(broker.name, []).append(measure(broker))
    return samples


def print_row(label: str, results: dict[str, float], unit: str, higher_is_better: bool) -> None:
    cells = "  ".join(f"{name} {value:>12,.1f}" for name, value in results.items())
    ratio = ""
    if results.get("tansu"):  # each kafka-shim (`shim`, `shim-...`) to Tansu
        shims = [name for name in results if name == "shim" or name.startswith("shim-")]
        ratio = "".join(f"  {name}/tansu {results[name] / results['tansu']:.2f}x" for name in shims)
    better = "higher" if higher_is_better else "lower"
    print(f"{label:<40}{cells}  {unit} ({better} is better){ratio}", flush=True)


def start_tree_broker(tree: Path, argv: list[str]) -> RunningBroker:
    """The broker of checkout `tree` (a before/after comparison), started with `argv` (the
    interpreter and `-m kafka_shim` first), once it says where it listens."""
    return launch("shim", argv, cwd=tree, env={**os.environ, "PYTHONPATH": str(tree)})


def start_shim_from(tree: str | None, args: tuple[str, ...] = ()) -> RunningBroker:
    """kafka-shim started as compat.targets.start_shim starts it (a temporary data directory),
    from checkout `tree` (a before/after comparison), or from this one."""
    # PYTHONSAFEPATH: `python -m` would otherwise put the working directory (this checkout)
    # ahead of PYTHONPATH.
    changed = {"PYTHONPATH": tree, "PYTHONSAFEPATH": "1"} if tree is not None else {}
    saved = {name: os.environ.get(name) for name in changed}
    os.environ.update(changed)
    try:
        return start_shim(args)
    finally:
        for name, value in saved.items():
            if value is None:
                del os.environ[name]
            else:
                os.environ[name] = value


def cli_source(tree: Path) -> str:
    """The command line's source in checkout `tree`, to ask which flags that version has: one
    module, or a package of them since the command line got a room of its own."""
    shim = tree / "kafka_shim" / "shim"  # a link to the top-level shim/ in older checkouts
    files = [shim / "cli.py"] if (shim / "cli.py").exists() else sorted((shim / "cli").glob("*.py"))
    return "".join(f.read_text() for f in files)
