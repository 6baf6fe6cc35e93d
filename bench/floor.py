"""What a synchronous round trip costs before any Kafka work: the floor under bench.request_cpu.

    python -m bench.floor [--requests 20000] [--rounds 3]

One blocking client (send a frame, read the answer, repeat; what a committing consumer does)
against, in the same run:
- a bare Trio server: a task per connection reading the socket and writing a fixed 64-byte
  answer, polling like the broker (`--busy-poll-us`) or parking in epoll;
- the broker's own framing (`shim.net.framing.FrameReader` and `send_all`, request memory
  included) answering the same fixed bytes;
- kafka-shim and Tansu answering a Heartbeat of a joined member and a standalone OffsetCommit.
It prints each server's process CPU per round trip (user + system, from /proc) and its
round trips per second. With polling, a server's CPU is most of the round trip by design: it
spins while the client prepares its next request. Only 127.0.0.1 is contacted.
"""

from __future__ import annotations

import argparse
import os
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from functools import partial
from pathlib import Path
from statistics import median

from bench.commits import create_topic
from bench.common import process_cpu_s, running
from bench.request_cpu import Connection, request_frames
from compat.targets import Broker, RunningBroker

ANSWER = b"\x00\x00\x00\x3c" + bytes(60)
REQUEST = b"\x00\x00\x00\x3c" + bytes(60)
BUSY_POLL_S = 500e-6  # the broker's default --busy-poll-us


async def _serve(kind: str, port_file: Path, busy_poll_s: float) -> None:
    import trio

    from kafka_shim.shim.net import framing

    memory = framing.MemoryGate(100 << 20)

    async def bare(stream: trio.SocketStream) -> None:
        fd = stream.socket.fileno()
        while True:
            polling_until = time.monotonic() + busy_poll_s
            while True:
                try:
                    request = os.read(fd, 65536)
                    break
                except BlockingIOError:
                    if time.monotonic() < polling_until:
                        await trio.lowlevel.checkpoint()
                    else:
                        await trio.lowlevel.wait_readable(fd)
            if not request:
                return
            os.write(fd, ANSWER)

    async def framed(stream: trio.SocketStream) -> None:
        reader = framing.FrameReader(stream.socket, 100 << 20, memory, busy_poll_s)
        try:
            while True:
                await reader.next_frame()
                reader.waiting_on = ""
                reader.frame_handled()
                if framing.write_at_once(reader, ANSWER) < len(ANSWER):  # as the broker's loop
                    raise RuntimeError("a 64-byte answer did not fit the socket")
                reader.mark_active()
        except framing.ConnectionClosed:
            pass
        finally:
            reader.close()

    async with trio.open_nursery() as nursery:
        handler = bare if kind == "bare" else framed
        listeners = await nursery.start(partial(trio.serve_tcp, handler, 0, host="127.0.0.1"))
        port_file.write_text(str(listeners[0].socket.getsockname()[1]))


def _round_trips(
    sock: socket.socket, frame_of: Callable[[int], bytes], count: int, pid: int
) -> tuple[float, float]:
    """(server CPU µs per round trip, round trips/s) over `count` round trips."""
    cpu_before, started = process_cpu_s(pid), time.perf_counter()
    for i in range(count):
        sock.sendall(frame_of(i))
        if not sock.recv(65536):
            raise ConnectionError("the server closed the connection")
    elapsed, cpu = time.perf_counter() - started, process_cpu_s(pid) - cpu_before
    return cpu / count * 1e6, count / elapsed


def fixed_answer_server(kind: str, count: int) -> tuple[float, float]:
    with tempfile.TemporaryDirectory(prefix="bench-floor-") as scratch:
        port_file = Path(scratch) / "port"
        process = subprocess.Popen([sys.executable, "-m", "bench.floor", "--serve", kind, str(port_file)])
        try:
            deadline = time.monotonic() + 30
            while not (port_file.exists() and port_file.read_text()):
                if time.monotonic() > deadline or process.poll() is not None:
                    raise RuntimeError(f"the {kind} server did not start")
                time.sleep(0.05)
            with socket.create_connection(("127.0.0.1", int(port_file.read_text())), timeout=30) as sock:
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                _round_trips(sock, lambda _: REQUEST, count // 10, process.pid)  # warm-up
                return _round_trips(sock, lambda _: REQUEST, count, process.pid)
        finally:
            process.kill()
            process.wait()


def broker_requests(broker: Broker, kind: str, count: int) -> tuple[float, float]:
    assert isinstance(broker, RunningBroker) and broker.process is not None
    topic = f"bench-floor-{uuid.uuid4().hex[:8]}"
    create_topic(broker.bootstrap, topic, 1)
    connection = Connection(broker.bootstrap)
    try:
        frame_of = request_frames(connection, kind, topic, count + count // 10)
        _round_trips(connection.sock, frame_of, count // 10, broker.process.pid)  # warm-up
        return _round_trips(connection.sock, lambda i: frame_of(i + count // 10), count, broker.process.pid)
    finally:
        connection.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=20_000, help="round trips per measurement")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--serve", nargs=2, metavar=("KIND", "PORT_FILE"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        import trio

        trio.run(_serve, args.serve[0], Path(args.serve[1]), BUSY_POLL_S)
        return
    samples: dict[str, list[tuple[float, float]]] = {}
    with running("shim") as shim, running("tansu") as tansu:
        for _ in range(args.rounds):
            for kind in ("bare", "framed"):
                samples.setdefault(f"Trio, {kind}, fixed answer", []).append(
                    fixed_answer_server(kind, args.requests)
                )
            for broker in (shim, tansu):
                for kind in ("Heartbeat", "OffsetCommit"):
                    samples.setdefault(f"{broker.name} {kind}", []).append(
                        broker_requests(broker, kind, args.requests)
                    )
    for name, values in samples.items():
        cpu, rate = median(v[0] for v in values), median(v[1] for v in values)
        print(f"{name:<32} {cpu:7.1f} µs CPU per round trip  {rate:9,.0f} round trips/s", flush=True)


if __name__ == "__main__":
    main()
