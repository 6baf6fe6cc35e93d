"""OffsetCommit and Produce rates from 1, 8 and 64 connections: kafka-shim in one process,
kafka-shim with one process per broker (`--brokers 2 --process-per-broker`) and Tansu, in one
run, rounds interleaved.

Each connection is a client of its own: its own group (OffsetCommit of one partition, as a
committing consumer sends) or its own partition (Produce of one 100-byte record, acks=all) of
a topic with as many partitions as connections, and it connects to the broker that serves it,
found as a client finds it (FindCoordinator for the group, Metadata for the partition's
leader). Every connection has one request in flight; all send, then all are answered. The
broker CPU is the run time of the broker's processes (the supervisor and its broker processes
for --process-per-broker), from the kernel's CPU clock of each process, in ns.

    python -m bench.connections [--requests 4000] [--rounds 3] [--counts 1,8,64] [--kinds OffsetCommit]
        [--before-tree DIR] [--targets shim,shim-processes,tansu,before,before-processes]

With `--before-tree DIR`, kafka-shim from another checkout (the commit before a change) runs
beside it, in one process and in two, in the same interleaved rounds.

Then the model: what 8 and 32 cores would give, from the CPU per request measured here and
how the groups and partitions of this run spread over 8 and 32 brokers (docs/performance.md).
"""

from __future__ import annotations

import argparse
import os
import time
import uuid
import zlib
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from pathlib import Path
from statistics import median
from typing import Any

from bench.commits import create_topic
from bench.common import process_cpu_s, start_shim_from
from bench.request_cpu import OFFSET_COMMIT, PRODUCE, VERSIONS, Connection, commit_body, produce_body
from compat.targets import RunningBroker, TargetUnavailable, start_shim, start_tansu
from kafka_shim.protocol.messages import APIS
from kafka_shim.storage.offsets_log import partition_for
from tests.wire import WireClient

KINDS = ("OffsetCommit", "Produce")
COUNTS = (1, 8, 64)
PROCESSES = 2  # brokers (processes) of the --process-per-broker target: this machine's cores
METADATA, FIND_COORDINATOR = 3, 10
PROCESS_ARGS = (
    *("--brokers", str(PROCESSES), "--process-per-broker"),
    *("--console", "off", "--schema-registry", "off"),
)
# name -> how to start it; kafka-shim as compat.targets starts it (on disk, console on).
TARGETS: dict[str, Callable[[], RunningBroker]] = {
    "shim": start_shim,
    "shim-processes": lambda: start_shim(PROCESS_ARGS),
    "tansu": start_tansu,
}
LABELS = {
    "shim": "kafka-shim",
    "shim-processes": f"kafka-shim, {PROCESSES} processes",
    "tansu": "Tansu",
    "before": "before",
    "before-processes": f"before, {PROCESSES} processes",
}


def before_targets(tree: str) -> dict[str, Callable[[], RunningBroker]]:
    """kafka-shim from checkout `tree` (the commit before a change), in one process and in two."""
    return {
        "before": lambda: start_shim_from(tree),
        "before-processes": lambda: start_shim_from(tree, PROCESS_ARGS),
    }


def tree_cpu_s(pid: int) -> float:
    """CPU seconds of `pid` and, while they run, its child processes (broker processes)."""
    total = process_cpu_s(pid)
    try:
        children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    except OSError:
        return total
    return total + sum(tree_cpu_s(int(child)) for child in children)


def idle_s() -> float:
    """Seconds every core of the machine has been idle (or waiting on I/O), from /proc/stat."""
    with open("/proc/stat") as stat:
        fields = stat.readline().split()  # cpu user nice system idle iowait ...
    return (int(fields[4]) + int(fields[5])) / os.sysconf("SC_CLK_TCK")


def routes(bootstrap: str, topic: str, groups: list[str]) -> tuple[dict[int, str], dict[str, str]]:
    """(partition -> its leader's address, group -> its coordinator's address), asked as a
    client asks: Metadata, then FindCoordinator of each group."""
    with WireClient(bootstrap, timeout_s=30) as connection:
        metadata = connection.request(
            METADATA,
            9,
            {
                "topics": [{"name": topic}],
                "allow_auto_topic_creation": False,
                "include_cluster_authorized_operations": False,
                "include_topic_authorized_operations": False,
            },
        )
        brokers = {b.node_id: f"{b.host}:{b.port}" for b in metadata.brokers}
        leaders = {p.partition_index: brokers[p.leader_id] for p in metadata.topics[0].partitions}
        coordinators = {}
        for group in groups:
            found = connection.request(FIND_COORDINATOR, 3, {"key": group, "key_type": 0})
            if found.error_code:
                raise RuntimeError(f"FindCoordinator {group}: error {found.error_code}")
            coordinators[group] = f"{found.host}:{found.port}"
        return leaders, coordinators


def with_partition(body: dict[str, Any], partition: int) -> dict[str, Any]:
    """`body` (request_cpu's, of partition 0) for partition `partition` instead."""
    for topic in body.get("topics") or body.get("topic_data") or []:
        for entry in topic.get("partitions") or topic.get("partition_data") or []:
            entry["partition_index" if "partition_index" in entry else "index"] = partition
    return body


def warm_up(kind: str, client: Connection, frame: bytes, timeout_s: float = 10.0) -> int:
    """The size of the answer to `frame` once it is answered without an error."""
    deadline = time.monotonic() + timeout_s
    while True:
        answer = client.raw_call(frame)
        errors = answer_errors(kind, answer)
        if not any(errors):
            return len(answer)
        if time.monotonic() > deadline:
            raise RuntimeError(f"{kind} answered errors {errors} for {timeout_s:.0f} s")
        time.sleep(0.01)


def answer_errors(kind: str, payload: bytes) -> list[int]:
    """The partitions' error codes of an answer (its payload after the correlation id)."""
    api_key = OFFSET_COMMIT if kind == "OffsetCommit" else PRODUCE
    api, version = APIS[api_key], VERSIONS[api_key]
    answer = api.response.parse(payload[5 if api.response_header_flexible(version) else 4 :], version)
    topics = answer.topics if kind == "OffsetCommit" else answer.responses
    return [
        p.error_code
        for t in topics
        for p in (t.partitions if kind == "OffsetCommit" else t.partition_responses)
    ]


def cpu_and_rate(
    broker: RunningBroker, kind: str, count: int, requests: int
) -> tuple[float, float, float, float]:
    """(broker CPU µs per request, requests/s, this client's CPU µs per request, the machine's
    idle cores meanwhile) of `requests` requests of `kind` over `count` connections, each its
    own client (group or partition), one request in flight on each."""
    assert broker.process is not None
    topic = f"bench-conn-{uuid.uuid4().hex[:8]}"
    create_topic(broker.bootstrap, topic, count)
    groups = [f"g-{topic}-{n}" for n in range(count)]
    leaders, coordinators = routes(broker.bootstrap, topic, groups)
    address = [coordinators[groups[n]] if kind == "OffsetCommit" else leaders[n] for n in range(count)]
    clients = [Connection(where) for where in address]
    rounds = requests // count
    try:
        if kind == "OffsetCommit":
            frames = [
                [
                    c.frame(OFFSET_COMMIT, with_partition(commit_body(g, topic, i), n))
                    for i in range(rounds + 1)
                ]
                for n, (c, g) in enumerate(zip(clients, groups, strict=True))
            ]
        else:
            frames = [
                [c.frame(PRODUCE, with_partition(produce_body(topic), n))] for n, c in enumerate(clients)
            ]
        # Warm-up: also the answer each connection must get every time, without an error (a
        # request sent to a broker that does not serve it would be answered NOT_COORDINATOR
        # or NOT_LEADER_OR_FOLLOWER: none crosses to another process).
        # A broker that learns of the new topic a moment after its creation answers
        # UNKNOWN_TOPIC_OR_PARTITION meanwhile, as Kafka's do: asked again, as a client does.
        expected = [warm_up(kind, c, f[0]) for c, f in zip(clients, frames, strict=True)]
        pid = broker.process.pid
        cpu_before, started, client_before = tree_cpu_s(pid), time.perf_counter(), time.process_time()
        idle_before = idle_s()
        for i in range(1, rounds + 1):
            for client, own in zip(clients, frames, strict=True):
                client.sock.sendall(own[i % len(own)])
            for client, size in zip(clients, expected, strict=True):
                answer = client.answer()
                if len(answer) != size:
                    raise RuntimeError(f"{broker.name} {kind}: answer {answer.hex()} is not {size} bytes")
        elapsed, cpu = time.perf_counter() - started, tree_cpu_s(pid) - cpu_before
        client_cpu = time.process_time() - client_before
        idle = idle_s() - idle_before
    finally:
        for client in clients:
            client.close()
    done = rounds * count
    return cpu / done * 1e6, done / elapsed, client_cpu / done * 1e6, idle / elapsed


Samples = dict[str, list[dict[tuple[str, int], tuple[float, float, float, float]]]]


def measure(
    requests: int,
    rounds: int,
    counts: tuple[int, ...] = COUNTS,
    kinds: tuple[str, ...] = KINDS,
    targets: dict[str, Callable[[], RunningBroker]] = TARGETS,
) -> Samples:
    """Every target running throughout, rounds alternating between them."""
    samples: Samples = {}
    with ExitStack() as stack:
        started: dict[str, RunningBroker] = {}
        for name, start in targets.items():
            try:
                started[name] = start()
            except TargetUnavailable as exc:
                print(f"  {name}: unavailable ({str(exc).splitlines()[0]})")
                continue
            stack.callback(started[name].stop)
        for _ in range(rounds):
            for name, broker in started.items():
                samples.setdefault(name, []).append(
                    {
                        (kind, count): cpu_and_rate(broker, kind, count, requests)
                        for kind in kinds
                        for count in counts
                    }
                )
    return samples


def medians(samples: Samples, index: int) -> Iterator[tuple[tuple[str, int], dict[str, float]]]:
    """(kind, count) -> target -> the median of its rounds (index 0: broker CPU per request,
    1: rate, 2: the client's CPU per request, 3: the machine's idle cores)."""
    shapes = next(iter(samples.values()))[0].keys() if samples else []
    for shape in shapes:
        yield shape, {name: median(run[shape][index] for run in runs) for name, runs in samples.items()}


# -- the model -------------------------------------------------------------------------------


def spread(brokers: int, clients: int) -> tuple[float, float]:
    """How evenly `clients` groups and partitions spread over `brokers` one-core processes, as
    kafka-shim places them: (groups' mean/max load, partitions' mean/max load), 1.0 = even. A
    group goes to the leader of its __consumer_offsets partition (partition_for over one
    partition per broker, the processes' default, shim.processes.node; leaders spread from a
    start per topic, shim.testbroker.cluster); a topic's partitions are striped."""
    start = zlib.crc32(b"__consumer_offsets")
    groups = Counter((start + partition_for(f"g-{n}", brokers)) % brokers for n in range(clients))
    partitions = Counter(n % brokers for n in range(clients))
    return (
        clients / brokers / max(groups.values()),
        clients / brokers / max(partitions.values()),
    )


def model(cpu_us: dict[str, float], kind: str, cores: int, clients: int) -> dict[str, float]:
    """Requests/s on `cores` cores from CPU per request: kafka-shim in one process stays on one
    core; one process per core reaches cores/CPU times the spread's evenness; Tansu is given
    linear scaling over every core (the most it could do)."""
    groups, partitions = spread(cores, clients)
    evenness = groups if kind == "OffsetCommit" else partitions
    rates: dict[str, float] = {}
    if not all(cpu_us.values()):  # a broker that used no CPU: nothing to model
        return rates
    if "shim" in cpu_us:
        rates["shim"] = 1e6 / cpu_us["shim"]
    if "shim-processes" in cpu_us:
        rates["shim-processes"] = min(cores, clients) * 1e6 / cpu_us["shim-processes"] * evenness
    if "tansu" in cpu_us:
        rates["tansu"] = cores * 1e6 / cpu_us["tansu"]
    return rates


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=4000, help="requests per kind, count and round")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--counts", default=",".join(map(str, COUNTS)), help="connection counts")
    parser.add_argument("--kinds", default=",".join(KINDS), help="request kinds: OffsetCommit,Produce")
    parser.add_argument(
        "--before-tree", metavar="DIR", help="also run kafka-shim from this checkout, as 'before' (both ways)"
    )
    parser.add_argument("--targets", help="only these targets (comma-separated): " + ",".join(LABELS))
    args = parser.parse_args()
    counts = tuple(int(c) for c in args.counts.split(","))
    kinds = tuple(kind for kind in KINDS if kind in args.kinds.split(","))
    targets = {**TARGETS, **(before_targets(args.before_tree) if args.before_tree else {})}
    if args.targets:
        targets = {name: start for name, start in targets.items() if name in args.targets.split(",")}
    samples = measure(args.requests, args.rounds, counts, kinds, targets)
    cpu, client, idle = dict(medians(samples, 0)), dict(medians(samples, 2)), dict(medians(samples, 3))
    print("requests/s (broker CPU per request; broker cores busy; client CPU per request; idle cores)")
    for shape, rates in medians(samples, 1):
        kind, count = shape
        cells = "  ".join(
            f"{LABELS[n]} {rates[n]:,.0f}/s ({cpu[shape][n]:.0f} µs; {rates[n] * cpu[shape][n] / 1e6:.2f}; "
            f"{client[shape][n]:.0f} µs; {idle[shape][n]:.2f})"
            for n in rates
        )
        ratios = "  ".join(
            f"{LABELS[n]}/Tansu {rates[n] / rates['tansu']:.2f}x"
            for n in rates
            if n != "tansu" and "tansu" in rates
        )
        print(f"{kind}, {count} connection(s): {cells}  {ratios}", flush=True)
    print("model (requests/s; CPU per request from the largest count measured):")
    for kind in kinds:
        cpu_us = cpu[kind, max(counts)]
        for cores in (2, 8, 32):
            rates = model(cpu_us, kind, cores, 64)
            cells = "  ".join(f"{LABELS[n]} {r:,.0f}" for n, r in rates.items())
            print(f"  {kind}, {cores} cores, 64 clients: {cells}", flush=True)


if __name__ == "__main__":
    main()
