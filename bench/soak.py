"""Soak: produce, fetch, commit and group join/leave churn over 200 connections for N minutes.

    python -m bench.soak --minutes 30 [--connections 200]

A broker (on disk, topics retaining 4 MiB each, offsets of empty groups kept one minute
so that expiry happens within the run) is driven by one thread per connection, a quarter
producing, a quarter fetching, the rest churning through groups: join, sync, commit,
heartbeat, leave, then either delete the group or leave it empty to expire. Every 10 s
it samples the broker's RSS, open file descriptors and the number of groups it lists.
It prints the samples and the slope of each over the run after its first minute:
RSS and descriptors must stay flat, and the groups the churn leaves behind must not
accumulate. Only 127.0.0.1 is contacted.
"""

from __future__ import annotations

import argparse
import tempfile
import threading
import time
from pathlib import Path
from statistics import linear_regression
from typing import Any

from bench.fuzz import (
    HEARTBEAT,
    JOIN_GROUP,
    OFFSET_COMMIT,
    PRODUCE,
    SYNC_GROUP,
    BrokerProcess,
    open_fds,
    rss_bytes,
)
from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.protocol.record_codec import Record, encode_batch
from tests.wire import WireClient

FETCH, LEAVE_GROUP, DESCRIBE_GROUPS, LIST_GROUPS, DELETE_GROUPS, CREATE_TOPICS = 1, 13, 15, 16, 42, 19
TOPICS = [f"soak-{i}" for i in range(4)]
SAMPLE_EVERY_S = 10.0
BATCH = encode_batch([Record(i, 1_000 + i, None, b"s" * 100) for i in range(10)])


class Counts:
    def __init__(self) -> None:
        self.requests = 0
        self.errors: dict[str, int] = {}
        # Rejoins answered UNKNOWN_MEMBER_ID because an offsets retention check removed the new
        # group between MEMBER_ID_REQUIRED and the rejoin: Kafka's cleanupGroupMetadata kills
        # an Empty group without offsets whatever its pending members, and its clients start
        # over with no member id, as the churn does (tests/shim/coordinator/test_offsets_admin.py).
        self.joins_restarted = 0
        self.lock = threading.Lock()

    def add(self, what: str, error_code: int) -> None:
        with self.lock:
            self.requests += 1
            if error_code:
                key = f"{what} error {error_code}"
                self.errors[key] = self.errors.get(key, 0) + 1


def produce(client: WireClient, index: int, counts: Counts, stop: threading.Event) -> None:
    topic = TOPICS[index % len(TOPICS)]
    body = {
        "acks": 1,
        "timeout_ms": 5000,
        "topic_data": [{"name": topic, "partition_data": [{"index": 0, "records": BATCH}]}],
    }
    while not stop.wait(0.05):
        response = client.request(PRODUCE, 9, body)
        counts.add("produce", response.responses[0].partition_responses[0].error_code)


def fetch(client: WireClient, index: int, counts: Counts, stop: threading.Event) -> None:
    topic = TOPICS[index % len(TOPICS)]
    offset = 0
    while not stop.wait(0.05):
        response = client.request(
            FETCH,
            11,
            {
                "max_wait_ms": 100,
                "min_bytes": 1,
                "max_bytes": 1 << 20,
                "topics": [
                    {
                        "topic": topic,
                        "partitions": [
                            {"partition": 0, "fetch_offset": offset, "partition_max_bytes": 1 << 18}
                        ],
                    }
                ],
            },
        )
        partition = response.responses[0].partitions[0]
        if partition.error_code == ErrorCode.OFFSET_OUT_OF_RANGE:  # retention moved the start past it
            offset = partition.log_start_offset
            continue
        counts.add("fetch", partition.error_code)
        # Read from the start again now and then: old data stays in play, as for a replaying consumer.
        offset = 0 if offset > 100_000 else partition.high_watermark


def churn(client: WireClient, index: int, counts: Counts, stop: threading.Event) -> None:
    cycle = 0
    while not stop.wait(0.05):
        cycle += 1
        group = f"soak-{index}-{cycle}"
        join = {
            "group_id": group,
            "session_timeout_ms": 10_000,
            "rebalance_timeout_ms": 10_000,
            "member_id": "",
            "protocol_type": "consumer",
            "protocols": [{"name": "range", "metadata": b""}],
        }
        joined = client.request(JOIN_GROUP, 5, join)
        if joined.error_code == ErrorCode.MEMBER_ID_REQUIRED:
            joined = client.request(JOIN_GROUP, 5, {**join, "member_id": joined.member_id})
            if joined.error_code == ErrorCode.UNKNOWN_MEMBER_ID and group_gone(client, group):
                with counts.lock:
                    counts.joins_restarted += 1
                continue
        counts.add("join", joined.error_code)
        member = {"group_id": group, "generation_id": joined.generation_id, "member_id": joined.member_id}
        synced = client.request(
            SYNC_GROUP, 3, {**member, "assignments": [{"member_id": joined.member_id, "assignment": b""}]}
        )
        counts.add("sync", synced.error_code)
        for offset in range(3):
            committed = client.request(
                OFFSET_COMMIT,
                8,
                {
                    "group_id": group,
                    "generation_id_or_member_epoch": joined.generation_id,
                    "member_id": joined.member_id,
                    "topics": [
                        {
                            "name": TOPICS[index % len(TOPICS)],
                            "partitions": [{"partition_index": 0, "committed_offset": offset}],
                        }
                    ],
                },
            )
            counts.add("commit", committed.topics[0].partitions[0].error_code)
            counts.add("heartbeat", client.request(HEARTBEAT, 4, member).error_code)
        left = client.request(
            LEAVE_GROUP, 4, {"group_id": group, "members": [{"member_id": joined.member_id}]}
        )
        counts.add("leave", left.error_code)
        if cycle % 2:  # the other half is left Empty, for offsets retention to expire
            deleted = client.request(DELETE_GROUPS, 1, {"groups_names": [group]})
            counts.add("delete", deleted.results[0].error_code)


def group_gone(client: WireClient, group: str) -> bool:
    described = client.request(DESCRIBE_GROUPS, 5, {"groups": [group]}).groups[0]
    return bool(described.group_state == "Dead")


def run_connection(role: Any, bootstrap: str, index: int, counts: Counts, stop: threading.Event) -> None:
    try:
        with WireClient(bootstrap, timeout_s=30) as client:
            role(client, index, counts, stop)
    except Exception as exc:  # counted: a soak reports failures, it does not stop at the first
        counts.add(f"{role.__name__}: {exc!r}"[:80], -1)


def group_count(bootstrap: str) -> int:
    # As long as the load's own requests may take: a slow answer is a sample, not a failed soak.
    with WireClient(bootstrap, timeout_s=60) as client:
        return len(client.request(LIST_GROUPS, 4, {"states_filter": []}).groups)


def slope_per_minute(samples: list[tuple[float, float]]) -> float:
    if len(samples) < 2:
        return 0.0
    slope, _ = linear_regression([t / 60 for t, _ in samples], [v for _, v in samples])
    return slope


def broker_args(data_dir: Path) -> tuple[str, ...]:
    """The soak's broker: on disk, small topics, offsets of empty groups expiring in the run."""
    settings = {
        # Offsets of empty groups expire within the run, so their state must go away.
        "offsets.retention.minutes": 1,
        "offsets.retention.check.interval.ms": 10_000,
        # The tombstones deleted and expired groups leave in __consumer_offsets are kept for
        # this long before compaction drops them (Kafka's default: a day). At the default the
        # churn's new group per cycle grows the offsets log, and the compaction pass that reads
        # it all, for the whole run: state Kafka keeps too, which is not what this measures.
        "log.cleaner.delete.retention.ms": 60_000,
        # Topics keep a few MiB each: what is measured is the broker, not the data it holds
        # (in memory, every produced byte would stay in RSS).
        "log.segment.bytes": 1 << 20,
        "log.retention.bytes": 4 << 20,
        "log.retention.check.interval.ms": 10_000,
    }
    args = ["--data-dir", str(data_dir), "--fsync", "never"]
    for name, value in settings.items():
        args += ["--config", f"{name}={value}"]
    return tuple(args)


def create_topics(bootstrap: str) -> None:
    with WireClient(bootstrap) as admin:
        topics = [{"name": name, "num_partitions": 1, "replication_factor": 1} for name in TOPICS]
        admin.request(CREATE_TOPICS, 5, {"topics": topics})


def start_load(
    bootstrap: str, connections: int, counts: Counts, stop: threading.Event
) -> list[threading.Thread]:
    """One thread per connection: a quarter producing, a quarter fetching, the rest churning."""
    roles = [produce] * (connections // 4) + [fetch] * (connections // 4)
    roles += [churn] * (connections - len(roles))
    threads = [
        threading.Thread(target=run_connection, args=(role, bootstrap, i, counts, stop), daemon=True)
        for i, role in enumerate(roles)
    ]
    for thread in threads:
        thread.start()
    return threads


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=30.0)
    parser.add_argument("--connections", type=int, default=200)
    args = parser.parse_args()

    workdir = Path(tempfile.mkdtemp(prefix="kafka-shim-soak-"))
    log_path = workdir / "broker.log"
    broker = BrokerProcess(log_path, broker_args(workdir / "data"))
    create_topics(broker.bootstrap)
    counts = Counts()
    stop = threading.Event()
    started = time.monotonic()
    threads = start_load(broker.bootstrap, args.connections, counts, stop)
    samples: list[tuple[float, int, int, int, int]] = []
    try:
        while time.monotonic() - started < args.minutes * 60:
            time.sleep(SAMPLE_EVERY_S)
            pid = broker.proc.pid
            sample = (
                time.monotonic() - started,
                rss_bytes(pid),
                open_fds(pid),
                group_count(broker.bootstrap),
                counts.requests,
            )
            samples.append(sample)
            print(
                f"  {sample[0] / 60:5.1f} min  RSS {sample[1] / 2**20:6.1f} MiB  fds {sample[2]:4}  "
                f"groups {sample[3]:5}  requests {sample[4]:>10,}",
                flush=True,
            )
    finally:
        stop.set()
        for thread in threads:
            thread.join(30)
        died = broker.stop()
    log_text = log_path.read_text()
    steady = [s for s in samples if s[0] >= 60] or samples
    elapsed = samples[-1][0] if samples else 0.0
    print(f"\nsoak: {args.connections} connections for {elapsed / 60:.1f} min, {counts.requests:,} requests")
    print(f"  requests/s                        {counts.requests / max(elapsed, 1):,.0f}")
    failures = dict(list(counts.errors.items())[:5])
    print(f"  failed requests                   {sum(counts.errors.values())} {failures}")
    print(
        f"  joins restarted (group removed by a retention check between the two joins, as Kafka does) "
        f"{counts.joins_restarted}"
    )
    print(f"  broker crashed                    {died is not None}")
    print(f"  tracebacks in the log             {log_text.count('Traceback')}")
    print(f"  RSS first / last (after 1 min)    {steady[0][1] / 2**20:.1f} / {steady[-1][1] / 2**20:.1f} MiB")
    rss_slope = slope_per_minute([(s[0], s[1] / 2**20) for s in steady])
    late_slope = slope_per_minute([(s[0], s[1] / 2**20) for s in samples[len(samples) // 2 :]])
    print(f"  RSS slope                 {rss_slope:+.3f} MiB/min ({late_slope:+.3f} in the second half)")
    print(f"  open fds first / last             {steady[0][2]} / {steady[-1][2]}")
    print(f"  open fds slope                    {slope_per_minute([(s[0], s[2]) for s in steady]):+.3f} /min")
    print(f"  groups listed first / last        {steady[0][3]} / {steady[-1][3]}")
    print(f"  groups slope                      {slope_per_minute([(s[0], s[3]) for s in steady]):+.2f} /min")


if __name__ == "__main__":
    main()
