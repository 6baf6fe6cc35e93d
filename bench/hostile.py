"""Hostile clients, measured: slow big frames and many idle connections, beside Tansu.

    python -m bench.hostile [--attackers 100] [--idle 10000]

1. Slow big frames (issue #13): `--attackers` connections each announce a frame just
   under 100 MiB (socket.request.max.bytes) and send 64 KiB of it. While they hold:
   the broker's RSS, and how long a fresh client waits for its ApiVersions answer.
2. Idle connections: `--idle` connections opened and held (each has had one ApiVersions
   answered); then the RSS per connection and a fresh client's wait again.

The file descriptor limit is raised to its hard limit first (the brokers inherit it).
Only 127.0.0.1 is contacted.
"""

from __future__ import annotations

import argparse
import resource
import socket
import struct
import time
from statistics import median

from bench.common import running
from bench.fuzz import rss_bytes
from compat.targets import RunningBroker, TargetUnavailable
from tests.wire import WireClient, encode_request

API_VERSIONS = 18
FRAME_ANNOUNCED = 100 * 1024 * 1024 - 1
SENT_OF_EACH = 64 * 1024
HELLO = encode_request(API_VERSIONS, 3, 1, {"client_software_name": "bench", "client_software_version": "1"})


def fresh_client_waits(bootstrap: str, count: int = 20) -> list[float]:
    """Seconds from connect to the ApiVersions answer, for `count` new clients."""
    waits = []
    for _ in range(count):
        started = time.perf_counter()
        with WireClient(bootstrap, timeout_s=60) as client:
            client.send_raw(HELLO)
            client.receive_frame()
        waits.append(time.perf_counter() - started)
    return waits


def open_connections(bootstrap: str, count: int, payload: bytes, answered: bool) -> list[socket.socket]:
    host, port = bootstrap.rsplit(":", 1)
    held = []
    for _ in range(count):
        sock = socket.create_connection((host, int(port)), timeout=30)
        sock.sendall(payload)
        held.append(sock)
    if answered:  # each waits for its answer, so every connection is known to be served
        for sock in held:
            size = struct.unpack(">i", sock.recv(4, socket.MSG_WAITALL))[0]
            sock.recv(size, socket.MSG_WAITALL)
    return held


def report(name: str, what: str, rss_before: int, rss_during: int, waits: list[float], per: int = 0) -> None:
    grown = (rss_during - rss_before) / 2**20
    line = (
        f"  {name:<6} {what:<28} RSS {rss_before / 2**20:7.1f} -> {rss_during / 2**20:7.1f} MiB"
        f" (+{grown:.1f})  fresh client median {median(waits) * 1000:6.1f} ms max {max(waits) * 1000:7.1f} ms"
    )
    if per:
        line += f"  {(rss_during - rss_before) / per / 1024:.1f} KiB/connection"
    print(line, flush=True)


def measure(broker: RunningBroker, attackers: int, idle: int) -> None:
    assert broker.process is not None
    pid = broker.process.pid
    deadline = time.monotonic() + 10
    while True:  # a target may report itself started a moment before it accepts
        try:
            fresh_client_waits(broker.bootstrap, 3)  # also loads the request path
            break
        except ConnectionRefusedError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)
    before = rss_bytes(pid)
    attack = struct.pack(">i", FRAME_ANNOUNCED) + b"\0" * SENT_OF_EACH
    held = open_connections(broker.bootstrap, attackers, attack, answered=False)
    time.sleep(1.0)  # let the broker read what they sent
    waits = fresh_client_waits(broker.bootstrap)
    report(broker.name, f"{attackers} x slow 100 MiB frames", before, rss_bytes(pid), waits)
    for sock in held:
        sock.close()
    time.sleep(1.0)

    before = rss_bytes(pid)
    try:
        held = open_connections(broker.bootstrap, idle, struct.pack(">i", len(HELLO)) + HELLO, answered=True)
    except OSError as exc:
        print(f"  {broker.name:<6} {idle} idle connections: failed ({exc})", flush=True)
        return
    time.sleep(1.0)
    waits = fresh_client_waits(broker.bootstrap, 50)
    report(broker.name, f"{idle} idle connections", before, rss_bytes(pid), waits, per=idle)
    for sock in held:
        sock.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--attackers", type=int, default=100)
    parser.add_argument("--idle", type=int, default=10_000)
    args = parser.parse_args()
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    for name in ("shim", "tansu"):
        try:
            with running(name) as broker:
                assert isinstance(broker, RunningBroker)
                measure(broker, args.attackers, args.idle)
        except TargetUnavailable as exc:
            print(f"  {name}: unavailable ({str(exc).splitlines()[0]})")


if __name__ == "__main__":
    main()
