"""What the pytest plugin costs: pytest start-up with and without it, and the fixture's start.

    python -m bench.pytest_startup [--runs 15]

Start-up is the wall time of `python -m pytest` on a file of one trivial test, in a fresh
directory, rounds interleaved so the machine's noise falls on every variant: without the
plugin, with it (this tree's `kafka_shim.pytest_plugin`, the module the pytest11 entry point
loads) and, for reference, with the broker imported at load as the plugin before it did.
The fixture start is `start_broker`, what `kafka_shim` runs per test: in this process once the
broker is imported, and the first one in a fresh interpreter, which pays for the imports.
There is no peer broker for this one (Tansu has no pytest plugin): the figures stand alone.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from statistics import median

from bench.common import print_row
from bench.startup import installed_like_env
from compat.targets import REPO_ROOT

# Every run blocks the entry point, whichever kafka-shim is installed, and names its plugin.
VARIANTS = {
    "without": [],
    "with": ["-p", "kafka_shim.pytest_plugin"],
    "eager": ["-p", "kafka_shim.shim.server"],  # the old plugin's imports: BrokerThread at load
}
FIRST_START = (
    "import time, kafka_shim.pytest_plugin as plugin\n"
    "started = time.perf_counter()\n"
    "shim = plugin.start_broker({}, {})\n"
    "print(time.perf_counter() - started)\n"
    "shim.stop()\n"
)


def pytest_seconds(extra: list[str], directory: Path, env: dict[str, str]) -> float:
    argv = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:kafka_shim", *extra]
    started = time.perf_counter()
    subprocess.run([*argv, "test_trivial.py"], cwd=directory, env=env, check=True, capture_output=True)
    return time.perf_counter() - started


def fixture_start_seconds(runs: int) -> list[float]:
    from kafka_shim.pytest_plugin import start_broker

    samples = []
    for _ in range(runs):
        started = time.perf_counter()
        shim = start_broker({}, {})
        samples.append(time.perf_counter() - started)
        shim.stop()
    return samples


def paired_median_ms(variant: list[float], baseline: list[float]) -> float:
    """Rounds interleave the variants, so per-round differences cancel slow drifts of the machine."""
    return median((v - b) * 1000 for v, b in zip(variant, baseline, strict=True))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()
    # This tree's kafka_shim, compiled as pip compiles it at install.
    env = installed_like_env() | {"PYTHONPATH": str(REPO_ROOT)}
    samples: dict[str, list[float]] = {name: [] for name in VARIANTS}
    with tempfile.TemporaryDirectory() as directory:
        (Path(directory) / "test_trivial.py").write_text("def test_nothing():\n    pass\n")
        for extra in VARIANTS.values():  # a warm-up each: bytecode written, files cached
            pytest_seconds(extra, Path(directory), env)
        for _ in range(args.runs):
            for name, extra in VARIANTS.items():
                samples[name].append(pytest_seconds(extra, Path(directory), env))
    ms = {name: median(values) * 1000 for name, values in samples.items()}
    print_row(
        f"pytest start-up (median of {args.runs})", {k: ms[k] for k in ("without", "with")}, "ms", False
    )
    print(
        f"  the plugin's cost: {paired_median_ms(samples['with'], samples['without']):+.1f} ms "
        f"(median of paired rounds; target: within 20 ms); importing the broker at load, "
        f"as the old plugin did: {paired_median_ms(samples['eager'], samples['without']):+.1f} ms"
    )
    first = subprocess.run(
        [sys.executable, "-c", FIRST_START],
        cwd=REPO_ROOT,
        env=env,
        check=True,
        capture_output=True,
        text=True,
    )
    print_row(
        "fixture start (in-process broker)",
        {
            "median": median(fixture_start_seconds(args.runs * 4)) * 1000,
            "first in a process": float(first.stdout) * 1000,
        },
        "ms",
        higher_is_better=False,
    )


if __name__ == "__main__":
    main()
