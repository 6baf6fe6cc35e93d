"""Broker CPU per request on the hot paths, kafka-shim beside Tansu in the same run.

One connection sends N requests of one kind synchronously (one in flight, as a
committing consumer does); the broker's own process CPU time (the kernel's CPU clock
of the process, in ns: /proc's 10 ms ticks were too coarse for a few thousand
requests) over those requests, divided by N, is its cost per request.
Wall-clock rate is printed too. Rounds alternate between the brokers. kafka-shim runs
as users run it, busy polling included (`--busy-poll-us`): CPU spent waiting for a quick
client's next request is counted.

With `--connections C`, C connections (each of its own group) have one request in flight
each, sent together and answered together: several clients' requests arriving at once,
as at a busy broker. The one-connection figure is latency-bound (a wake-up and, with busy
polling, the client's own time per request); this one is closer to the broker's own work.

    python -m bench.request_cpu [--requests 10000] [--rounds 3] [--connections 1] [--pipeline 1]
        [--before-tree DIR]

With `--pipeline P`, each connection sends P requests together and then reads their answers,
as a client pipelining requests (librdkafka's producer) does.

Tansu keeps its data in memory here (compat.targets starts it with memory://tansu/) while
kafka-shim writes a data directory, as `python -m kafka_shim` does: `--also-memory` adds a
kafka-shim started with `--memory` to the same rounds, to compare like with like.

With `--before-tree DIR`, kafka-shim from another checkout (the commit before a change, e.g.
`git worktree add /tmp/before <commit>`) runs in the same rounds, as "before".

With `--also-busy-poll-us US`, a second kafka-shim started with `--busy-poll-us US` runs in the
same rounds: what busy polling costs and buys (`--also-busy-poll-us 0`: CPU spent spinning
through the client's own time between an answer and its next request is left out).

Kinds: OffsetCommit of one partition by a standalone consumer, Heartbeat of a
joined member, Produce of one 100-byte record (acks=all), Fetch of a partition holding one
100-byte record from its start (max_wait_ms 500, min_bytes 1, as librdkafka asks: answered
at once, with the record). Not a Fetch at the log end with max_wait_ms 0: Tansu answers that
with no topics at all, without looking at the partition, so it compared no work with some.
"""

from __future__ import annotations

import argparse
import socket
import struct
import sys
import time
import uuid
from collections.abc import Callable
from statistics import median
from typing import Any

from bench.commits import create_topic
from bench.common import BROKERS, measure_interleaved, print_row, process_cpu_ns, start_shim_from
from compat.targets import Broker, RunningBroker, launch, start_shim
from kafka_shim.protocol.messages import APIS
from kafka_shim.protocol.record_codec import Record, encode_batch
from tests.wire import encode_request

_LENGTH = struct.Struct(">i")
# Versions librdkafka 2.x sends and both brokers speak.
PRODUCE, FETCH, OFFSET_COMMIT, HEARTBEAT, JOIN_GROUP, SYNC_GROUP = 0, 1, 8, 12, 11, 14
VERSIONS = {PRODUCE: 7, FETCH: 11, OFFSET_COMMIT: 8, HEARTBEAT: 4, JOIN_GROUP: 5, SYNC_GROUP: 5}
KINDS = ("OffsetCommit", "Heartbeat", "Produce", "Fetch")


class Connection:
    """A blocking connection sending one request at a time."""

    def __init__(self, bootstrap: str) -> None:
        host, port = bootstrap.rsplit(":", 1)
        self.sock = socket.create_connection((host, int(port)), timeout=30)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def close(self) -> None:
        self.sock.close()

    def frame(self, api_key: int, body: dict[str, Any]) -> bytes:
        """A whole request frame; the correlation id stays 0 (one in flight)."""
        payload = encode_request(api_key, VERSIONS[api_key], 0, body, "bench")
        return _LENGTH.pack(len(payload)) + payload

    def raw_call(self, frame: bytes) -> bytes:
        """The response payload after the correlation id (and tag section, if flexible)."""
        self.sock.sendall(frame)
        return self.answer()

    def answer(self) -> bytes:
        """The next response's payload."""
        size = _LENGTH.unpack(self._read(4))[0]
        return self._read(size)

    def call(self, api_key: int, body: dict[str, Any]) -> Any:
        api, version = APIS[api_key], VERSIONS[api_key]
        payload = self.raw_call(self.frame(api_key, body))
        return api.response.parse(payload[5 if api.response_header_flexible(version) else 4 :], version)

    def _read(self, size: int) -> bytes:
        data = b""
        while len(data) < size:
            chunk = self.sock.recv(size - len(data))
            if not chunk:
                raise ConnectionError("the broker closed the connection")
            data += chunk
        return data


def subscription(topic: str) -> bytes:
    """ConsumerProtocolSubscription v0 naming `topic`, no user data."""
    name = topic.encode()
    return struct.pack(">hih", 0, 1, len(name)) + name + _LENGTH.pack(-1)


def assignment(topic: str) -> bytes:
    """ConsumerProtocolAssignment v0 of partition 0 of `topic` (Tansu answers an empty
    assignment with REBALANCE_IN_PROGRESS)."""
    name = topic.encode()
    return struct.pack(">hih", 0, 1, len(name)) + name + struct.pack(">iii", 1, 0, -1)


def join_request(group: str, metadata: bytes) -> dict[str, Any]:
    """A new member's JoinGroup of `group` with the range protocol (its member id still empty)."""
    return {
        "group_id": group,
        "session_timeout_ms": 30_000,
        "rebalance_timeout_ms": 30_000,
        "member_id": "",
        "group_instance_id": None,
        "protocol_type": "consumer",
        "protocols": [{"name": "range", "metadata": metadata}],
    }


def join(connection: Connection, group: str, topic: str) -> tuple[str, int]:
    """Join `group` as its only member and sync: (member id, generation)."""
    body = join_request(group, subscription(topic))
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:  # MEMBER_ID_REQUIRED first, then the join proper
        joined = connection.call(JOIN_GROUP, body)
        body["member_id"] = joined.member_id
        if joined.error_code:
            continue
        synced = connection.call(
            SYNC_GROUP,
            {
                "group_id": group,
                "generation_id": joined.generation_id,
                "member_id": joined.member_id,
                "group_instance_id": None,
                "protocol_type": "consumer",
                "protocol_name": "range",
                "assignments": [{"member_id": joined.member_id, "assignment": assignment(topic)}],
            },
        )
        if synced.error_code == 0:
            return joined.member_id, joined.generation_id
    raise RuntimeError(f"{group}: no stable membership within 30 s")


def commit_body(group: str, topic: str, offset: int) -> dict[str, Any]:
    """A standalone consumer's OffsetCommit of partition 0 of `topic`."""
    partition = {"partition_index": 0, "committed_offset": offset, "committed_metadata": ""}
    return {
        "group_id": group,
        "generation_id_or_member_epoch": -1,
        "member_id": "",
        "group_instance_id": None,
        "topics": [{"name": topic, "partitions": [partition]}],
    }


def produce_body(topic: str) -> dict[str, Any]:
    """One 100-byte record to partition 0 of `topic`, acks=all."""
    batch = encode_batch([Record(0, int(time.time() * 1000), None, b"x" * 100)])
    return {
        "transactional_id": None,
        "acks": -1,
        "timeout_ms": 30_000,
        "topic_data": [{"name": topic, "partition_data": [{"index": 0, "records": batch}]}],
    }


def fetch_body(topic: str, offset: int) -> dict[str, Any]:
    """A consumer's Fetch of partition 0 of `topic` from `offset`, waiting up to 500 ms for a byte."""
    partition = {
        "partition": 0,
        "current_leader_epoch": -1,
        "fetch_offset": offset,
        "log_start_offset": -1,
        "partition_max_bytes": 1 << 20,
    }
    return {
        "replica_id": -1,
        "max_wait_ms": 500,
        "min_bytes": 1,
        "max_bytes": 1 << 20,
        "isolation_level": 0,
        "session_id": 0,
        "session_epoch": -1,
        "topics": [{"topic": topic, "partitions": [partition]}],
        "forgotten_topics_data": [],
        "rack_id": "",
    }


def request_frames(
    connection: Connection, kind: str, topic: str, count: int, group: str = ""
) -> Callable[[int], bytes]:
    """The i-th request of `kind` (frames are built before the clock starts where they can be);
    OffsetCommit and Heartbeat are `group`'s (by default one named after the topic), Fetch
    reads the topic from its start."""
    group = group or f"g-{topic}"
    if kind == "OffsetCommit":
        frames = [connection.frame(OFFSET_COMMIT, commit_body(group, topic, i)) for i in range(count)]
        return frames.__getitem__
    if kind == "Heartbeat":
        member_id, generation = join(connection, group, topic)
        beat = connection.frame(
            HEARTBEAT,
            {
                "group_id": group,
                "generation_id": generation,
                "member_id": member_id,
                "group_instance_id": None,
            },
        )
        return lambda _: beat
    if kind == "Produce":
        produce = connection.frame(PRODUCE, produce_body(topic))
        return lambda _: produce
    fetch = connection.frame(FETCH, fetch_body(topic, 0))
    return lambda _: fetch


def cpu_and_rate(
    broker: Broker, kind: str, count: int, connections: int = 1, pipeline: int = 1
) -> tuple[float, float]:
    """(broker CPU µs per request, requests/s) for `count` requests of `kind` over
    `connections` connections, each with `pipeline` in flight (sent together, as a client
    pipelining its requests does, then their answers read)."""
    assert isinstance(broker, RunningBroker) and broker.process is not None
    topic = f"bench-cpu-{uuid.uuid4().hex[:8]}"
    create_topic(broker.bootstrap, topic, 1)
    clients = [Connection(broker.bootstrap) for _ in range(connections)]
    rounds = count // (connections * pipeline)
    try:
        if kind == "Fetch":  # the one record every Fetch reads, whatever the connections
            clients[0].raw_call(clients[0].frame(PRODUCE, produce_body(topic)))
        frames = [
            request_frames(client, kind, topic, rounds * pipeline, f"g-{topic}-{n}")
            for n, client in enumerate(clients)
        ]
        # Warm-up: also the answer every request of that connection must get.
        expected = [
            len(client.raw_call(frame_of(0))) for client, frame_of in zip(clients, frames, strict=True)
        ]
        pid = broker.process.pid
        cpu_before, started = process_cpu_ns(pid), time.perf_counter()
        for i in range(rounds):
            for client, frame_of in zip(clients, frames, strict=True):
                client.sock.sendall(b"".join(frame_of(i * pipeline + k) for k in range(pipeline)))
            for client, size in zip(clients, expected, strict=True):
                for _ in range(pipeline):
                    answer = client.answer()
                    if len(answer) != size:
                        raise RuntimeError(f"{broker.name} {kind}: answer {answer.hex()} is not {size} bytes")
        elapsed, cpu = time.perf_counter() - started, (process_cpu_ns(pid) - cpu_before) / 1e9
    finally:
        for client in clients:
            client.close()
    requests = rounds * connections * pipeline
    return cpu / requests * 1e6, requests / elapsed


def start_shim_in_memory() -> RunningBroker:
    """kafka-shim keeping its data in memory, as the Tansu beside it does (memory://tansu/):
    start_shim gives it a data directory."""
    return launch(
        "shim", [sys.executable, "-m", "kafka_shim", "--port", "0", "--host", "127.0.0.1", "--memory"]
    )


def renamed(broker: RunningBroker, name: str) -> RunningBroker:
    """`broker` with its samples and rows under `name` (a second kafka-shim beside the first)."""
    broker.name = name
    return broker


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=10_000, help="requests per kind and round")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument(
        "--kinds", default=",".join(KINDS), help="comma-separated subset of " + ",".join(KINDS)
    )
    parser.add_argument(
        "--connections", type=int, default=1, help="connections with one request in flight each"
    )
    parser.add_argument("--pipeline", type=int, default=1, help="requests sent together on each connection")
    parser.add_argument(
        "--also-busy-poll-us",
        type=int,
        metavar="US",
        help="also measure a kafka-shim started with --busy-poll-us US (0: never polls)",
    )
    parser.add_argument(
        "--before-tree", metavar="DIR", help="also measure kafka-shim from this checkout, as 'before'"
    )
    parser.add_argument(
        "--also-memory",
        action="store_true",
        help="also measure a kafka-shim started with --memory (Tansu keeps its data in memory here)",
    )
    args = parser.parse_args()
    kinds = args.kinds.split(",")
    brokers: tuple[str, ...] = BROKERS
    starters: dict[str, Callable[[], Broker]] = {}
    if args.also_busy_poll_us is not None:
        polling = f"shim-poll-{args.also_busy_poll_us}us"
        flags = ("--busy-poll-us", str(args.also_busy_poll_us))
        brokers = ("shim", polling, *brokers[1:])
        starters[polling] = lambda: renamed(start_shim(flags), polling)
    if args.also_memory:
        brokers = (*brokers[:-1], "shim-memory", brokers[-1])
        starters["shim-memory"] = lambda: renamed(start_shim_in_memory(), "shim-memory")
    if args.before_tree is not None:
        brokers = ("before", *brokers)
        starters["before"] = lambda: renamed(start_shim_from(args.before_tree), "before")
    samples = measure_interleaved(
        lambda broker: {
            kind: cpu_and_rate(broker, kind, args.requests, args.connections, args.pipeline) for kind in kinds
        },
        args.rounds,
        brokers,
        starters,
    )
    over = "synchronous" if args.connections == 1 else f"{args.connections} connections"
    over += f", {args.pipeline} pipelined" if args.pipeline > 1 else ""
    for kind in kinds:
        cpu = {name: median(s[kind][0] for s in runs) for name, runs in samples.items()}
        rate = {name: median(s[kind][1] for s in runs) for name, runs in samples.items()}
        print_row(f"{kind} broker CPU, {over}", cpu, "µs/request", False)
        print_row(f"{kind} rate, {over}", rate, "requests/s", True)


if __name__ == "__main__":
    main()
