"""The offsets log: start-up cost by offsets.topic.num.partitions, recovery time
after many commits (target: under 2 s for 1M commits, thanks to compaction),
and synchronous commits/s on disk with the default fsync policy beside Tansu.

    python -m bench.offsets_recovery [--commits 1000000] [--partitions 1 50] [--rounds 5]

Recovery is timed in-process on a Broker (the same constructor the CLI runs):
the offsets log is written through the coordinator (1000 groups x 10
partitions, 10 offsets per OffsetCommit), compacted by one pass of the disk
log's cleaner (storage.cleaner), then a new Broker opens the data dir and
replays it.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from statistics import median

from bench.commits import commits_per_second
from bench.common import print_row
from compat.targets import RunningBroker, TargetUnavailable, launch, start_tansu
from kafka_shim.shim.broker import Broker
from kafka_shim.shim.config.broker_config import BrokerConfig
from kafka_shim.shim.coordinator.types import CommitRequest, OffsetCommit, TopicPartition
from kafka_shim.storage import cleaner
from kafka_shim.storage.disk_log import DiskLog
from kafka_shim.storage.offsets_log import OFFSETS_TOPIC

GROUPS = 1000
PARTITIONS_PER_GROUP = 10
NOW = 1_700_000_000_000


def config(data_dir: Path | None, partitions: int) -> BrokerConfig:
    return BrokerConfig(port=0, data_dir=data_dir, offsets_topic_num_partitions=partitions)


def timed(action: Callable[[], object]) -> float:
    started = time.perf_counter()
    action()
    return (time.perf_counter() - started) * 1000


def first_commit(broker: Broker) -> None:
    request = CommitRequest("g", {TopicPartition("t", 0): OffsetCommit(1)})
    broker.group_service.effects.apply(broker.groups.commit_offsets(request, broker.clock()))


def startup_ms(partitions: int, on_disk: bool, rounds: int) -> tuple[float, float]:
    """(start + first commit, which creates the topic; restart over what that left)."""
    fresh, again = [], []
    for _ in range(rounds):
        with tempfile.TemporaryDirectory() as directory:
            data_dir = Path(directory) if on_disk else None
            started = time.perf_counter()
            broker = Broker(config(data_dir, partitions))
            first_commit(broker)
            fresh.append((time.perf_counter() - started) * 1000)
            broker.close()
            if on_disk:
                started = time.perf_counter()
                broker = Broker(config(data_dir, partitions))
                again.append((time.perf_counter() - started) * 1000)
                broker.close()
    return median(fresh), median(again) if again else float("nan")


def write_commits(broker: Broker, commits: int) -> float:
    """Commits through the coordinator (the broker appends its records); records/s."""
    started = time.perf_counter()
    requests = commits // PARTITIONS_PER_GROUP
    for i in range(requests):
        offsets = {TopicPartition("t", p): OffsetCommit(i) for p in range(PARTITIONS_PER_GROUP)}
        broker.group_service.effects.apply(
            broker.groups.commit_offsets(CommitRequest(f"group-{i % GROUPS}", offsets), NOW + i)
        )
    return requests * PARTITIONS_PER_GROUP / (time.perf_counter() - started)


def clean(broker: Broker) -> None:
    """One pass of the disk log's cleaner over every offsets partition."""
    topic = broker.topics.get(OFFSETS_TOPIC)
    assert topic is not None
    for log in topic.partitions:
        assert isinstance(log, DiskLog)
        cleaner.clean(log, NOW)


def offsets_bytes(broker: Broker) -> int:
    topic = broker.topics.get(OFFSETS_TOPIC)
    assert topic is not None
    return sum(len(p.read(p.log_start_offset, 1 << 40)) for p in topic.partitions if p.log_end_offset)


def recovery(commits: int, partitions: int, on_disk: bool) -> None:
    with tempfile.TemporaryDirectory() as directory:
        data_dir = Path(directory) if on_disk else None
        broker = Broker(config(data_dir, partitions), clock=lambda: NOW)
        rate = write_commits(broker, commits)
        before = offsets_bytes(broker)
        cleaning = timed(lambda: clean(broker)) if on_disk else 0.0
        after = offsets_bytes(broker)
        where = "disk" if on_disk else "memory"
        label = f"{commits:,} commits, {partitions} partitions, {where}"
        print(
            f"{label}: written at {rate:,.0f} records/s; offsets log {before / 1e6:.1f} MB -> "
            f"{after / 1e6:.1f} MB after compaction ({cleaning:.0f} ms)",
            flush=True,
        )
        if on_disk:
            broker.close()
            started = time.perf_counter()
            broker = Broker(config(data_dir, partitions), clock=lambda: NOW)
            ms = (time.perf_counter() - started) * 1000
        else:  # memory cannot restart: time the same replay into the coordinator
            from kafka_shim.shim.coordinator.coordinator import GroupCoordinator

            ms = timed(lambda: GroupCoordinator().load(broker.group_service.offsets_log.replay(), NOW))
        offset = broker.groups.fetch_offsets(f"group-{GROUPS - 1}", [TopicPartition("t", 0)])
        assert offset[TopicPartition("t", 0)].offset == commits // PARTITIONS_PER_GROUP - 1, offset
        print_row(f"  recovery ({where}, {partitions} p)", {"shim": ms}, "ms", False)
        broker.close()


def start_shim_on_disk(data_dir: Path) -> RunningBroker:
    argv = [
        sys.executable,
        "-m",
        "kafka_shim",
        "--port",
        "0",
        "--host",
        "127.0.0.1",
        "--data-dir",
        str(data_dir),
    ]
    return launch("shim", argv)


def commit_rates(seconds: float, rounds: int) -> None:
    samples: dict[str, list[float]] = {}
    with tempfile.TemporaryDirectory() as directory:
        brokers = [start_shim_on_disk(Path(directory))]
        try:
            brokers.append(start_tansu())
        except TargetUnavailable as exc:
            print(f"  tansu: unavailable ({str(exc).splitlines()[0]})")
        try:
            for _ in range(rounds):
                for broker in brokers:
                    samples.setdefault(broker.name, []).append(commits_per_second(broker, seconds))
        finally:
            for broker in brokers:
                broker.stop()
    results = {name: median(values) for name, values in samples.items()}
    print_row("sync commits/s (shim on disk, fsync interval)", results, "commits/s", True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--commits", type=int, default=1_000_000)
    parser.add_argument("--partitions", type=int, nargs="+", default=[1, 50])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--seconds", type=float, default=2.0, help="one commit-rate round")
    parser.add_argument("--skip", nargs="*", default=[], choices=["startup", "recovery", "commits"])
    args = parser.parse_args()
    if "startup" not in args.skip:
        for partitions in args.partitions:
            for on_disk in (False, True):
                fresh, again = startup_ms(partitions, on_disk, args.rounds)
                where = "disk" if on_disk else "memory"
                print_row(f"start + first commit ({where}, {partitions} p)", {"shim": fresh}, "ms", False)
                if on_disk:
                    print_row(f"restart ({where}, {partitions} p)", {"shim": again}, "ms", False)
    if "recovery" not in args.skip:
        for partitions in args.partitions:
            for on_disk in (False, True):
                recovery(args.commits, partitions, on_disk)
    if "commits" not in args.skip:
        commit_rates(args.seconds, args.rounds)


if __name__ == "__main__":
    main()
