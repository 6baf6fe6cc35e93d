"""A neighbour's heartbeat latency while a 1 GiB compacted partition is cleaned.

    python -m bench.cleaner_pause [--gib 1] [--segment-mib 256] [--before TREE]

A data directory gets one compacted partition of `--gib` GiB (1 KiB values over 10,000
keys, 64 records a batch, segment.bytes `--segment-mib`), written straight through the
storage layer; kafka-shim starts on it (`python -m kafka_shim --data-dir`, the cleaner's
pass every log.retention.check.interval.ms=1000). Meanwhile one connection, a joined member
of another group, sends Heartbeats back to back, and another produces one keyed record at a
time (acks=all) to the partition being cleaned, until the cleaner has rewritten it (its
segments shrink to what compaction leaves). Printed: p50 / p99 / max of both, and how long
the clean took.

`--before TREE` measures the same with the kafka-shim of another checkout too, in the same
invocation (`git worktree add /tmp/kafka-shim-before <commit>`): the figure before a change.
Tansu is measured under the same two connections for scale, without a cleaning of its own:
it has no log cleaner to trigger (its storage engine here is memory, as compat.targets
starts it), so no peer does the same work.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from statistics import median, quantiles

from bench.commits import create_topic
from bench.common import cli_source, start_tree_broker
from bench.request_cpu import HEARTBEAT, PRODUCE, Connection, join
from compat.targets import RunningBroker, TargetUnavailable, start_tansu
from kafka_shim.protocol.record_codec import Record, build_batch
from kafka_shim.storage.disk_store import DiskStore
from kafka_shim.storage.durability import DiskOptions, FsyncPolicy

TOPIC = "compacted"
KEYS = 10_000
VALUE = b"v" * 1024
PER_BATCH = 64
GIB = 1 << 30


def prepare(data_dir: Path, gib: float, segment_mib: int) -> int:
    """The compacted partition, `gib` GiB of batches (plus one, so the last full segment is
    closed); returns its size in bytes."""
    store = DiskStore(data_dir, DiskOptions(fsync=FsyncPolicy.NEVER))
    try:
        configs = {"cleanup.policy": "compact", "segment.bytes": str(segment_mib << 20)}
        log = store.topics.create(TOPIC, 1, configs).partitions[0]
        now = int(time.time() * 1000)
        written = serial = 0
        while written <= gib * GIB:
            records = [Record(i, now, b"key-%d" % ((serial + i) % KEYS), VALUE) for i in range(PER_BATCH)]
            serial += PER_BATCH
            batches = build_batch(records)
            log.append(batches)
            written += len(batches.data)
        return written
    finally:
        store.close()


def closed_bytes(data_dir: Path) -> int:
    """The bytes of the partition's closed segments (all but the newest: the active one,
    which the produce connection keeps growing)."""
    directory = data_dir / f"{TOPIC}-0"
    sizes = sorted(
        (entry.name, entry.stat().st_size) for entry in os.scandir(directory) if entry.name.endswith(".log")
    )
    return sum(size for _, size in sizes[:-1])


def start_tree(tree: Path, data_dir: Path) -> RunningBroker:
    """kafka-shim from checkout `tree` (its own modules, not this one's) on `data_dir`."""
    argv = [
        sys.executable,
        "-m",
        "kafka_shim",
        "--port",
        "0",
        "--data-dir",
        str(data_dir),
        "--log-level",
        "WARNING",
        "--config",
        "log.retention.check.interval.ms=1000",
    ]
    if '"--console"' in cli_source(tree):
        argv += ["--console", "off"]  # its fixed port may be taken; older trees have none
    return start_tree_broker(tree, argv)


def percentiles(samples: list[float]) -> str:
    cuts = quantiles(samples, n=100)
    figures = f"p50 {median(samples):7.1f}  p99 {cuts[98]:7.1f}  max {max(samples):8.1f} ms"
    return f"{figures}  ({len(samples)} requests)"


def measure(
    bootstrap: str, done: Callable[[float], bool], timeout_s: float
) -> tuple[list[float], list[float], float]:
    """Heartbeat and produce latencies (ms) until `done(seconds measured so far)`; and how
    long that took (s). Timing starts once the neighbour has joined its group."""
    neighbour = Connection(bootstrap)
    member_id, generation = join(neighbour, "neighbour", TOPIC)
    identity = {"generation_id": generation, "member_id": member_id, "group_instance_id": None}
    beat = neighbour.frame(HEARTBEAT, {"group_id": "neighbour", **identity})
    heartbeats: list[float] = []
    produces: list[float] = []
    stop = threading.Event()

    def produce() -> None:
        producer = Connection(bootstrap)
        serial = 0
        while not stop.is_set():
            serial += 1
            record = Record(0, int(time.time() * 1000), b"key-%d" % (serial % KEYS), VALUE)
            partition = {"index": 0, "records": build_batch([record]).data}
            body = {
                "transactional_id": None,
                "acks": -1,
                "timeout_ms": 30_000,
                "topic_data": [{"name": TOPIC, "partition_data": [partition]}],
            }
            started = time.perf_counter()
            producer.call(PRODUCE, body)
            produces.append((time.perf_counter() - started) * 1000)
        producer.close()

    producing = threading.Thread(target=produce, daemon=True)
    began = time.monotonic()
    producing.start()
    while not done(time.monotonic() - began) and time.monotonic() - began < timeout_s:
        started = time.perf_counter()
        neighbour.raw_call(beat)
        heartbeats.append((time.perf_counter() - started) * 1000)
    took = time.monotonic() - began
    stop.set()
    producing.join(timeout=60)
    neighbour.close()
    return heartbeats, produces, took


def run_shim(label: str, tree: Path, args: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory(prefix="cleaner-pause-") as directory:
        data_dir = Path(directory)
        size = prepare(data_dir, args.gib, args.segment_mib)
        broker = start_tree(tree, data_dir)
        try:
            # Compaction leaves at most the last record of each of 10,000 keys (10 MiB).
            target = 20 << 20
            heartbeats, produces, took = measure(
                broker.bootstrap, lambda _: closed_bytes(data_dir) < target, args.timeout
            )
        finally:
            broker.stop()
        print(f"{label:<28} clean of {size / GIB:.2f} GiB took {took:6.1f} s")
        print(f"{'':<28} neighbour Heartbeat  {percentiles(heartbeats)}")
        print(f"{'':<28} Produce to it        {percentiles(produces)}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--gib", type=float, default=1.0)
    parser.add_argument("--segment-mib", type=int, default=256)
    parser.add_argument("--before", type=Path, help="a checkout of kafka-shim before the change")
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds to wait for the clean")
    parser.add_argument("--tansu-seconds", type=float, default=30.0)
    args = parser.parse_args()
    here = Path(__file__).resolve().parent.parent
    if args.before is not None:
        run_shim(f"kafka-shim before ({args.before.name})", args.before, args)
    run_shim("kafka-shim", here, args)
    try:
        tansu = start_tansu()
    except TargetUnavailable as exc:
        print(f"tansu: unavailable ({str(exc).splitlines()[0]})")
        return
    try:
        create_topic(tansu.bootstrap, TOPIC, 1)
        heartbeats, produces, _ = measure(
            tansu.bootstrap, lambda spent: spent > args.tansu_seconds, args.timeout
        )
    finally:
        tansu.stop()
    print(f"{'tansu (no cleaner)':<28} {args.tansu_seconds:.0f} s of the same two connections")
    print(f"{'':<28} neighbour Heartbeat  {percentiles(heartbeats)}")
    print(f"{'':<28} Produce              {percentiles(produces)}", flush=True)


if __name__ == "__main__":
    main()
