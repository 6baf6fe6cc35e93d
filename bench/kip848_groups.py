"""KIP-848 consumer groups on kafka-shim, beside classic groups (and Tansu, which has only
classic ones), in the same run.

1. The 3-member scenario with confluent-kafka members (subprocesses, so one can be
   SIGKILLed), 6 partitions, members subscribing 1 s apart: seconds until every partition is
   owned exactly once after the first subscribe, after a member's close, after a SIGKILL.
   No client setting beyond the protocol: the consumer protocol with kafka-shim's
   group.consumer.* defaults; classic with librdkafka's defaults (session.timeout.ms 45 s).
2. Heartbeats per second of broker CPU with 1000 consumer-protocol members in 100 groups
   (10 members on a 10-partition topic each), heartbeating back to back over 50
   connections once the groups are stable; the broker's CPU time is read from /proc.

    python -m bench.kip848_groups [--skip-coverage] [--seconds 10]
"""

from __future__ import annotations

import argparse
import socket
import struct
import threading
import time
import uuid
from typing import Any

from bench.commits import create_topic
from bench.common import process_cpu_s, running
from compat.drivers import DRIVERS
from compat.groups import GroupMembers
from compat.schema import Command
from compat.targets import RunningBroker, TargetUnavailable
from kafka_shim.protocol.headers import RequestHeader
from kafka_shim.protocol.messages.consumer_group_heartbeat import API as HEARTBEAT

PARTITIONS = 6
CONVERGE_S = 120.0
CLASSIC_SESSION_MS = 45_000  # librdkafka's default session.timeout.ms
GROUPS, MEMBERS, CONNECTIONS = 100, 10, 50
VERSION = 1
_LENGTH = struct.Struct(">i")


# --- 1. time to full coverage ------------------------------------------------------------


def coverage(broker: RunningBroker, protocol: str) -> dict[str, float]:
    topic = f"bench-kip848-{uuid.uuid4().hex[:8]}"
    create_topic(broker.bootstrap, topic, PARTITIONS)
    template = Command(
        op="member",
        bootstrap=broker.bootstrap,
        topic=topic,
        partitions=PARTITIONS,
        group=f"g-{topic}",
        timeout_s=CONVERGE_S,
        assignor="uniform" if protocol == "consumer" else "range",
        session_timeout_ms=CLASSIC_SESSION_MS,
        group_protocol="consumer" if protocol == "consumer" else "classic",
    )
    with GroupMembers(DRIVERS["confluent-kafka"], template) as members:
        first = members.start_staggered(["a", "b", "c"])
        joined = members.wait_converged(CONVERGE_S).at - first
        closed_at = time.time()
        members.close("a")
        closed = members.wait_converged(CONVERGE_S).at - closed_at
        killed_at = time.time()
        members.kill("b")
        killed = members.wait_converged(CONVERGE_S).at - killed_at
    return {"join": joined, "close": closed, "kill": killed}


def print_coverage() -> None:
    print("seconds to every partition owned once (3 members, 6 partitions, confluent-kafka)")
    print(f"{'broker / protocol':<28}{'after 1st subscribe':>20}{'after close':>14}{'after SIGKILL':>16}")
    for target, protocols in (("shim", ("consumer", "classic")), ("tansu", ("classic",))):
        try:
            with running(target) as broker:
                for protocol in protocols:
                    assert isinstance(broker, RunningBroker)
                    seconds = coverage(broker, protocol)
                    print(
                        f"{target + ' / ' + protocol:<28}{seconds['join']:>20.2f}"
                        f"{seconds['close']:>14.2f}{seconds['kill']:>16.2f}",
                        flush=True,
                    )
        except TargetUnavailable as exc:
            print(f"{target}: unavailable ({str(exc).splitlines()[0]})")
    print("tansu / consumer: n/a (no ConsumerGroupHeartbeat)")


# --- 2. heartbeat throughput -------------------------------------------------------------


def frame(body: dict[str, Any], correlation_id: int = 0) -> bytes:
    header = RequestHeader.build(
        {
            "request_api_key": HEARTBEAT.key,
            "request_api_version": VERSION,
            "correlation_id": correlation_id,
            "client_id": "bench",
        },
        2,
    )
    payload = header + HEARTBEAT.request.build(body, VERSION)
    return _LENGTH.pack(len(payload)) + payload


class Connection:
    def __init__(self, bootstrap: str) -> None:
        host, port = bootstrap.rsplit(":", 1)
        self.sock = socket.create_connection((host, int(port)), timeout=30)
        self.buffer = b""

    def responses(self, count: int) -> list[bytes]:
        """The next `count` response payloads (header included)."""
        out: list[bytes] = []
        while len(out) < count:
            while len(self.buffer) >= 4:
                (size,) = _LENGTH.unpack_from(self.buffer)
                if len(self.buffer) < 4 + size:
                    break
                out.append(self.buffer[4 : 4 + size])
                self.buffer = self.buffer[4 + size :]
            if len(out) < count:
                chunk = self.sock.recv(1 << 20)
                if not chunk:
                    raise ConnectionError("the broker closed the connection")
                self.buffer += chunk
        return out

    def call(self, frames: list[bytes]) -> list[Any]:
        self.sock.sendall(b"".join(frames))
        # Response header v1: correlation id and an empty tag section.
        return [HEARTBEAT.response.parse(r[5:], VERSION) for r in self.responses(len(frames))]


class Member:
    def __init__(self, group: str, topic: str) -> None:
        self.group, self.topic = group, topic
        self.member_id = str(uuid.uuid4())
        self.epoch = 0
        self.owned: list[dict[str, Any]] = []

    def request(self) -> bytes:
        body: dict[str, Any] = {
            "group_id": self.group,
            "member_id": self.member_id,
            "member_epoch": self.epoch,
        }
        if self.epoch == 0:
            body.update(rebalance_timeout_ms=30_000, subscribed_topic_names=[self.topic], topic_partitions=[])
        else:
            body["topic_partitions"] = self.owned
        return frame(body)

    def steady_request(self) -> bytes:
        return frame({"group_id": self.group, "member_id": self.member_id, "member_epoch": self.epoch})

    def answered(self, response: Any) -> bool:
        """Takes the answer; True if it changed nothing."""
        if response.error_code:
            raise RuntimeError(f"heartbeat refused: {response.error_code} {response.error_message}")
        changed = response.member_epoch != self.epoch or response.assignment is not None
        self.epoch = response.member_epoch
        if response.assignment is not None:
            self.owned = [
                {"topic_id": t.topic_id, "partitions": t.partitions}
                for t in response.assignment.topic_partitions
            ]
        return not changed


def heartbeat_rate(broker: RunningBroker, seconds: float) -> tuple[float, float]:
    topics = []
    for g in range(GROUPS):
        topics.append(f"bench-hb-{g}-{uuid.uuid4().hex[:6]}")
    for topic in topics:
        create_topic(broker.bootstrap, topic, MEMBERS)
    members = [Member(f"bench-hb-group-{g}", topics[g]) for g in range(GROUPS) for _ in range(MEMBERS)]
    per_connection = len(members) // CONNECTIONS
    lanes = [
        (Connection(broker.bootstrap), members[i * per_connection : (i + 1) * per_connection])
        for i in range(CONNECTIONS)
    ]
    for _ in range(60):  # join and reconcile until a whole round changes nothing
        quiet = True
        for connection, lane in lanes:
            for member, response in zip(lane, connection.call([m.request() for m in lane]), strict=True):
                quiet = member.answered(response) and quiet
        if quiet:
            break
    else:
        raise RuntimeError("the groups did not settle")
    counts = [0] * len(lanes)
    stop = threading.Event()

    def hammer(index: int) -> None:
        connection, lane = lanes[index]
        batch = b"".join(m.steady_request() for m in lane)
        while not stop.is_set():
            connection.sock.sendall(batch)
            for response in connection.responses(len(lane)):
                if response[9:11] != b"\x00\x00":  # the error code, after header and throttle time
                    raise RuntimeError(f"heartbeat refused: {response[9:11].hex()}")
            counts[index] += len(lane)

    threads = [threading.Thread(target=hammer, args=(i,), daemon=True) for i in range(len(lanes))]
    assert broker.process is not None
    cpu_before, started = process_cpu_s(broker.process.pid), time.perf_counter()
    for thread in threads:
        thread.start()
    time.sleep(seconds)
    stop.set()
    for thread in threads:
        thread.join(timeout=30)
    elapsed, cpu = time.perf_counter() - started, process_cpu_s(broker.process.pid) - cpu_before
    for connection, _ in lanes:
        connection.sock.close()
    total = sum(counts)
    return total / elapsed, total / cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--skip-coverage", action="store_true")
    parser.add_argument("--seconds", type=float, default=10.0)
    args = parser.parse_args()
    if not args.skip_coverage:
        print_coverage()
    with running("shim") as broker:
        assert isinstance(broker, RunningBroker)
        wall, per_core = heartbeat_rate(broker, args.seconds)
    print(
        f"heartbeats, {GROUPS * MEMBERS} members in {GROUPS} groups: {wall:,.0f}/s wall clock, "
        f"{per_core:,.0f} per second of broker CPU (one core)"
    )
    print("tansu: n/a (no ConsumerGroupHeartbeat)")


if __name__ == "__main__":
    main()
