"""The soak's mix (produce, fetch, group churn) against two builds of the broker, alternating.

    python -m bench.churn_mix [--revs bf8052f 14119dd] [--rounds 10] [--seconds 10] [--connections 40]

Each revision is exported from git (`git archive`, "." for the working tree) and run as
the soak runs it (`bench.soak.broker_args`). Both run for the whole measurement; rounds
alternate between them (the order flips each round), each round opening fresh
connections and driving the soak's load (`bench.soak.start_load`) for `--seconds`. A
round's figures: requests/s, and the CPU the broker's main thread spent per request
(from /proc/<pid>/task/<pid>/schedstat), which the clients' own speed does not move.
It prints the medians of both and the ratios. The default revisions are main before #13
(bf8052f) and the merge of #13 (14119dd). Only 127.0.0.1 is contacted.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import tarfile
import tempfile
import threading
import time
from io import BytesIO
from pathlib import Path
from statistics import median

from bench.common import main_thread_cpu_ns
from bench.fuzz import REPO_ROOT, BrokerProcess
from bench.soak import Counts, broker_args, create_topics, start_load


def export(rev: str, into: Path) -> Path:
    """The tree of `rev` ("." for the working tree) as a directory to run the broker from."""
    if rev == ".":
        return REPO_ROOT
    archive = subprocess.run(["git", "archive", rev], cwd=REPO_ROOT, capture_output=True, check=True).stdout
    tree = into / rev
    with tarfile.open(fileobj=BytesIO(archive)) as tar:
        tar.extractall(tree, filter="tar")
    return tree


def one_round(broker: BrokerProcess, connections: int, seconds: float) -> tuple[float, float, int]:
    """(requests/s, broker CPU µs per request, failed requests) of one round."""
    counts, stop = Counts(), threading.Event()
    cpu_before, started = main_thread_cpu_ns(broker.proc.pid), time.perf_counter()
    threads = start_load(broker.bootstrap, connections, counts, stop)
    time.sleep(seconds)
    stop.set()
    for thread in threads:
        thread.join(60)
    elapsed, cpu = time.perf_counter() - started, main_thread_cpu_ns(broker.proc.pid) - cpu_before
    return counts.requests / elapsed, cpu / 1000 / max(counts.requests, 1), sum(counts.errors.values())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--revs", nargs=2, default=["bf8052f", "14119dd"], metavar=("BEFORE", "AFTER"))
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--connections", type=int, default=40)
    args = parser.parse_args()

    workdir = Path(tempfile.mkdtemp(prefix="kafka-shim-churn-"))
    brokers: dict[str, BrokerProcess] = {}
    try:
        for rev in args.revs:
            tree = export(rev, workdir)
            brokers[rev] = BrokerProcess(workdir / f"{rev}.log", broker_args(workdir / f"{rev}-data"), tree)
            create_topics(brokers[rev].bootstrap)
        samples: dict[str, list[tuple[float, float, int]]] = {rev: [] for rev in args.revs}
        for index in range(args.rounds):
            for rev in args.revs if index % 2 == 0 else reversed(args.revs):
                samples[rev].append(one_round(brokers[rev], args.connections, args.seconds))
                round_rate, round_cpu, _ = samples[rev][-1]
                print(
                    f"  round {index + 1:2} {rev:<8} {round_rate:7,.0f} requests/s"
                    f" {round_cpu:6.1f} µs CPU/request",
                    flush=True,
                )
    finally:
        for broker in brokers.values():
            broker.stop()
        shutil.rmtree(workdir, ignore_errors=True)

    before, after = args.revs
    rate = {rev: median(s[0] for s in values) for rev, values in samples.items()}
    cpu = {rev: median(s[1] for s in values) for rev, values in samples.items()}
    failed = {rev: sum(s[2] for s in values) for rev, values in samples.items()}
    print(f"\nsoak mix, {args.connections} connections, {args.rounds} x {args.seconds:g} s; medians")
    for label, values, unit in (("requests/s", rate, ""), ("broker CPU/request", cpu, " µs")):
        ratio = values[after] / values[before]
        print(
            f"  {label:<19} {before} {values[before]:8,.1f} {after} {values[after]:8,.1f}{unit} ({ratio:.3f})"
        )
    print(f"  failed requests     {before} {failed[before]:8}  {after} {failed[after]:8}")


if __name__ == "__main__":
    main()
