"""A neighbour's heartbeat latency while one admin client creates, then deletes, 30,000
partitions in one request.

    python -m bench.admin_stall [--topics 3] [--partitions 30000] [--rounds 3] [--before TREE]

Each round starts every broker afresh: kafka-shim on a new data directory (the default
fsync), `--before TREE` (another checkout, e.g. `git worktree add /tmp/kafka-shim-before
<commit>`) the same way, and Tansu (its memory engine, as compat.targets starts it). A
neighbour joins a classic group and sends Heartbeats back to back on its own connection;
meanwhile a confluent-kafka AdminClient creates `--topics` topics sharing `--partitions`
partitions in one CreateTopics request, and once it is answered deletes them in one
DeleteTopics request. For kafka-shim the deletion is measured until the last partition
directory is gone (it answers once the catalog no longer holds the topics, then removes
the files). Printed per broker: the median over rounds of the neighbour's Heartbeat p50,
p99 and max during each phase, and how long the phase took; for kafka-shim also what the
partitions cost the process (resident memory, open files).

kafka-shim refuses more than 10,000 new partitions in one request by default, as Kafka 4.x
does; this run raises controller.max.records.per.batch so that the one request is made.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections.abc import Callable, Mapping
from concurrent.futures import Future
from dataclasses import dataclass
from pathlib import Path
from statistics import median, quantiles

from confluent_kafka.admin import AdminClient, NewTopic

from bench.commits import create_topic
from bench.common import cli_source, start_tree_broker
from bench.request_cpu import HEARTBEAT, Connection, join
from compat.targets import RunningBroker, TargetUnavailable, start_tansu

NEIGHBOUR_TOPIC = "neighbour"
ADMIN_TIMEOUT_S = 900


@dataclass
class Phase:
    """The neighbour's heartbeat latencies (ms) during one phase, and how long it took (s)."""

    latencies: list[float]
    seconds: float

    def figures(self) -> tuple[float, float, float]:
        samples = self.latencies or [0.0]
        p99 = quantiles(samples, n=100, method="inclusive")[98] if len(samples) > 1 else samples[0]
        return median(samples), p99, max(samples)


@dataclass
class Round:
    create: Phase
    delete: Phase
    rss_mib: float = 0.0  # what the partitions added to the broker's resident memory
    files: int = 0  # what they added to its open descriptors


def start_tree(tree: Path, data_dir: Path, partitions: int) -> RunningBroker:
    """kafka-shim from checkout `tree` (its own modules) on `data_dir`; its per-request cap
    raised to `partitions` where the tree has one."""
    argv = [sys.executable, "-m", "kafka_shim", "--port", "0", "--data-dir", str(data_dir)]
    argv += ["--log-level", "WARNING"]
    protocol = tree / "kafka_shim" / "protocol"
    # The settings are one module in older trees, a package of areas since #29.
    declared = (
        protocol / "settings.py"
        if (protocol / "settings.py").exists()
        else protocol / "settings" / "broker.py"
    )
    if '"controller.max.records.per.batch"' in declared.read_text():
        argv += ["--config", f"controller.max.records.per.batch={partitions}"]
    if '"--console"' in cli_source(tree):
        argv += ["--console", "off"]
    return start_tree_broker(tree, argv)


def _process_figures(pid: int) -> tuple[float, int]:
    """(resident MiB, open descriptors) of process `pid`."""
    status = Path(f"/proc/{pid}/status").read_text()
    rss_kib = next(int(line.split()[1]) for line in status.splitlines() if line.startswith("VmRSS:"))
    return rss_kib / 1024, len(os.listdir(f"/proc/{pid}/fd"))


def beating(bootstrap: str) -> tuple[Callable[[Callable[[], bool]], Phase], Callable[[], None]]:
    """A joined neighbour: `during(done)` sends Heartbeats until `done()` and returns them."""
    create_topic(bootstrap, NEIGHBOUR_TOPIC, 1)
    neighbour = Connection(bootstrap)
    neighbour.sock.settimeout(ADMIN_TIMEOUT_S)  # a stalled broker answers late, not never
    member_id, generation = join(neighbour, "neighbour", NEIGHBOUR_TOPIC)
    identity = {"generation_id": generation, "member_id": member_id, "group_instance_id": None}
    beat = neighbour.frame(HEARTBEAT, {"group_id": "neighbour", **identity})

    def during(done: Callable[[], bool]) -> Phase:
        latencies: list[float] = []
        began = time.monotonic()
        while not done():
            started = time.perf_counter()
            neighbour.raw_call(beat)
            latencies.append((time.perf_counter() - started) * 1000)
        return Phase(latencies, time.monotonic() - began)

    return during, neighbour.close


def _settle(futures: Mapping[str, Future[None]], what: str) -> None:
    """Raise the first failure among the admin request's answered `futures`."""
    for future in futures.values():
        failure = future.exception(timeout=0)
        if failure is not None:
            raise RuntimeError(f"the {what} request failed: {failure!r}") from failure


def _answered(futures: Mapping[str, Future[None]]) -> Callable[[], bool]:
    return lambda: all(future.done() for future in futures.values())


def one_round(
    bootstrap: str,
    names: list[str],
    per_topic: int,
    gone: Callable[[], bool],
    between: Callable[[], None] = lambda: None,
) -> Round:
    """Create then delete `names` (`per_topic` partitions each) in one request each, the
    neighbour beating meanwhile (`between` runs once they exist); the deletion lasts until
    `gone()`."""
    during, close = beating(bootstrap)
    admin = AdminClient({"bootstrap.servers": bootstrap, "socket.timeout.ms": 300_000})
    try:
        topics = [NewTopic(name, per_topic, 1) for name in names]
        timeout = {"request_timeout": ADMIN_TIMEOUT_S, "operation_timeout": ADMIN_TIMEOUT_S}
        created = admin.create_topics(topics, **timeout)
        create = during(_answered(created))
        _settle(created, "create")
        between()
        deleted = admin.delete_topics(names, **timeout)
        delete = during(lambda: _answered(deleted)() and gone())
        _settle(deleted, "delete")
        return Round(create, delete)
    finally:
        close()


def run_shim(tree: Path, args: argparse.Namespace) -> Round:
    per_topic = args.partitions // args.topics
    names = [f"wide-{index}" for index in range(args.topics)]
    with tempfile.TemporaryDirectory(prefix="admin-stall-", dir=args.data_root) as directory:
        data_dir = Path(directory)
        broker = start_tree(tree, data_dir, args.partitions)
        try:
            assert broker.process is not None
            pid = broker.process.pid
            create_topic(broker.bootstrap, "warm-up", 1)
            before = _process_figures(pid)
            after: list[tuple[float, int]] = []
            edges = [data_dir / f"{name}-{index}" for name in names for index in (0, per_topic - 1)]
            measured = one_round(
                broker.bootstrap,
                names,
                per_topic,
                lambda: not any(path.exists() for path in edges),
                lambda: after.append(_process_figures(pid)),
            )
            measured.rss_mib = after[0][0] - before[0]
            measured.files = after[0][1] - before[1]
            return measured
        finally:
            broker.stop(timeout_s=120)


def run_tansu(args: argparse.Namespace) -> Round | None:
    try:
        tansu = start_tansu()
    except TargetUnavailable as exc:
        print(f"tansu: unavailable ({str(exc).splitlines()[0]})")
        return None
    try:
        per_topic = args.partitions // args.topics
        return one_round(tansu.bootstrap, [f"wide-{i}" for i in range(args.topics)], per_topic, lambda: True)
    finally:
        tansu.stop()


def report(label: str, rounds: list[Round]) -> None:
    for phase in ("create", "delete"):
        figures = [getattr(r, phase).figures() for r in rounds]
        p50, p99, worst = (median(f[i] for f in figures) for i in range(3))
        took = median(getattr(r, phase).seconds for r in rounds)
        count = median(len(getattr(r, phase).latencies) for r in rounds)
        print(
            f"{label:<38} {phase:<7} took {took:7.1f} s   neighbour Heartbeat p50 {p50:7.1f}  "
            f"p99 {p99:8.1f}  max {worst:8.1f} ms  ({count:.0f} heartbeats)",
            flush=True,
        )
    if any(r.rss_mib for r in rounds):
        rss = median(r.rss_mib for r in rounds)
        files = median(r.files for r in rounds)
        print(f"{'':<38} the partitions add {rss:.0f} MiB resident, {files:.0f} open files", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--topics", type=int, default=3)
    parser.add_argument("--partitions", type=int, default=30_000, help="in all, shared by the topics")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--before", type=Path, help="a checkout of kafka-shim before the change")
    parser.add_argument("--data-root", type=Path, help="where the data directories go (a real disk)")
    args = parser.parse_args()
    here = Path(__file__).resolve().parent.parent
    print(
        f"{args.partitions} partitions in {args.topics} topics, one CreateTopics then one DeleteTopics; "
        f"medians of {args.rounds} rounds",
        flush=True,
    )
    results: dict[str, list[Round]] = {}
    for _ in range(args.rounds):
        if args.before is not None:
            results.setdefault(f"kafka-shim before ({args.before.name})", []).append(
                run_shim(args.before, args)
            )
        results.setdefault("kafka-shim", []).append(run_shim(here, args))
        tansu = run_tansu(args)
        if tansu is not None:
            results.setdefault("tansu (memory engine)", []).append(tansu)
    for label, rounds in results.items():
        report(label, rounds)


if __name__ == "__main__":
    main()
