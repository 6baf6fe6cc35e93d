"""What the pytest plugin costs: pytest start-up with and without it, and the fixture's start.

    python -m bench.pytest_startup [--runs 15]

Start-up is the wall time of `python -m pytest` on a file of one trivial test, in a fresh
directory, rounds interleaved so the machine's noise falls on every variant: without the
plugin, with it (this tree's `kafka_shim.pytest_plugin`, the module the pytest11 entry point
loads) and, for reference, with the broker imported at load as the plugin before it did.
Each run's CPU time (user + system) is printed beside its wall time: on a shared machine the
wall time swings by hundreds of ms with the neighbours' load, the CPU time much less. The
plugin's own import after pytest's is timed alone too, free of that noise.
The fixture start is `start_broker`, what `kafka_shim` runs per test: in this process once the
broker is imported, and the first one in a fresh interpreter, which pays for the imports.
There is no peer broker for this one (Tansu has no pytest plugin): the figures stand alone.
"""

from __future__ import annotations

import argparse
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from statistics import median
from typing import NamedTuple

from bench.common import print_row
from bench.startup import installed_like_env
from compat.targets import REPO_ROOT

# Every run blocks the entry point, whichever kafka-shim is installed, and names its plugin.
VARIANTS = {
    "without": [],
    "with": ["-p", "kafka_shim.pytest_plugin"],
    "eager": ["-p", "kafka_shim.shim.server"],  # the old plugin's imports: BrokerThread at load
}
# The plugin's own load after pytest's: what the entry point adds to every run, without the
# noise of a whole pytest start-up around it.
PLUGIN_IMPORT = (
    "import time, pytest\n"
    "started = time.perf_counter()\n"
    "import kafka_shim.pytest_plugin\n"
    "print(time.perf_counter() - started)\n"
)
FIRST_START = (
    "import time, kafka_shim.pytest_plugin as plugin\n"
    "started = time.perf_counter()\n"
    "shim = plugin.start_broker({}, {})\n"
    "print(time.perf_counter() - started)\n"
    "shim.stop()\n"
)


class Run(NamedTuple):
    wall_s: float
    cpu_s: float  # user + system: what the run itself spent, whatever else the machine ran


def pytest_run(extra: list[str], directory: Path, env: dict[str, str]) -> Run:
    argv = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:kafka_shim", *extra]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    subprocess.run([*argv, "test_trivial.py"], cwd=directory, env=env, check=True, capture_output=True)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return Run(wall, after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)


def python_seconds(program: str, env: dict[str, str]) -> float:
    """What `program`, run in a fresh interpreter, prints: the seconds it measured."""
    result = subprocess.run(
        [sys.executable, "-c", program], cwd=REPO_ROOT, env=env, check=True, capture_output=True, text=True
    )
    return float(result.stdout)


def fixture_start_seconds(runs: int) -> list[float]:
    from kafka_shim.pytest_plugin import start_broker

    samples = []
    for _ in range(runs):
        started = time.perf_counter()
        shim = start_broker({}, {})
        samples.append(time.perf_counter() - started)
        shim.stop()
    return samples


def pytest_startup_samples(runs: int, env: dict[str, str]) -> dict[str, list[Run]]:
    samples: dict[str, list[Run]] = {name: [] for name in VARIANTS}
    names = list(VARIANTS)
    with tempfile.TemporaryDirectory() as directory:
        (Path(directory) / "test_trivial.py").write_text("def test_nothing():\n    pass\n")
        for extra in VARIANTS.values():  # a warm-up each: bytecode written, files cached
            pytest_run(extra, Path(directory), env)
        for round_number in range(runs):
            # Each round starts with another variant, so none always runs first.
            shift = round_number % len(names)
            for name in names[shift:] + names[:shift]:
                samples[name].append(pytest_run(VARIANTS[name], Path(directory), env))
    return samples


def paired_median_ms(variant: list[float], baseline: list[float]) -> float:
    """Rounds interleave the variants, so per-round differences cancel slow drifts of the machine."""
    return median((v - b) * 1000 for v, b in zip(variant, baseline, strict=True))


def print_startup(samples: dict[str, list[Run]], measure: str) -> None:
    values = {name: [getattr(run, measure) for run in runs] for name, runs in samples.items()}
    print_row(
        f"pytest start-up, {measure.removesuffix('_s')} (median)",
        {name: median(values[name]) * 1000 for name in ("without", "with")},
        "ms",
        higher_is_better=False,
    )
    print(
        f"  the plugin's cost {paired_median_ms(values['with'], values['without']):+.1f} ms; "
        f"importing the broker at load instead {paired_median_ms(values['eager'], values['without']):+.1f} ms"
        " (medians of paired rounds)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()
    # This tree's kafka_shim, compiled as pip compiles it at install.
    env = installed_like_env(REPO_ROOT) | {"PYTHONPATH": str(REPO_ROOT)}
    samples = pytest_startup_samples(args.runs, env)
    print(f"{args.runs} rounds; target: the plugin costs within 20 ms. On a busy machine read cpu, not wall.")
    for measure in Run._fields:
        print_startup(samples, measure)
    print_row(
        f"importing the plugin after pytest ({args.runs}x)",
        {"median": median(python_seconds(PLUGIN_IMPORT, env) for _ in range(args.runs)) * 1000},
        "ms",
        higher_is_better=False,
    )
    print_row(
        "fixture start (in-process broker)",
        {
            "median": median(fixture_start_seconds(args.runs * 4)) * 1000,
            "first in a process": python_seconds(FIRST_START, env) * 1000,
        },
        "ms",
        higher_is_better=False,
    )


if __name__ == "__main__":
    main()
