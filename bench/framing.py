"""The cost of the memory-bounded framing: today's FrameReader beside the one before it.

    python -m bench.framing [--rounds 12] [--seconds 1.0] [--connections 4]

One server process runs both framings, each on its own loopback port, with the same
loop the broker runs per connection (read a frame, answer it, then the reader's own
bookkeeping): today's `shim.net.framing.FrameReader` and `send_all`, and the pair from
before #13, read from git history (`BEFORE`) and compiled as they were, not copied
into the tree. The answer is a fixed response, so nothing but framing and socket work
differs. Clients in this process send request frames of a given size and read
responses of a given size; rounds alternate between the two framings (the order
flips each round), so the machine's noise falls on both alike. For each workload it
prints the median requests/s and the median CPU the server spent per request (its
main thread's run time from /proc/<pid>/task/<pid>/schedstat, in ns), and the
ratio after/before. Only 127.0.0.1 is contacted.
"""

from __future__ import annotations

import argparse
import ast
import os
import socket
import struct
import subprocess
import sys
import threading
import time
from functools import partial
from pathlib import Path
from statistics import median
from typing import Any, NoReturn

from bench.common import main_thread_cpu_ns

# The merge of #13 is 14119dd; its first parent is main before it.
BEFORE = "bf8052f"
REPO_ROOT = Path(__file__).resolve().parents[1]
# (name, request frame bytes, response frame bytes): a consumer's fetch (small request, a
# large answer), producers (1 KiB, 64 KiB and a 1 MiB batch, small answers), and a
# heartbeat-sized ping-pong like the group-churn mix.
WORKLOADS = (
    ("ping-pong 64 B / 64 B", 64, 64),
    ("produce 1 KiB / 64 B", 1024, 64),
    ("produce 64 KiB / 64 B", 64 << 10, 64),
    ("produce 1 MiB / 64 B", 1 << 20, 64),
    ("fetch 100 B / 256 KiB", 100, 256 << 10),
)
_LENGTH = struct.Struct(">i")


def old_framing() -> dict[str, Any]:
    """`FrameReader` and `send_all` of shim/server.py at BEFORE, compiled on their own."""
    import trio

    from kafka_shim.shim.net.framing import ConnectionClosed

    source = subprocess.run(
        ["git", "show", f"{BEFORE}:shim/server.py"], cwd=REPO_ROOT, capture_output=True, text=True, check=True
    ).stdout
    tree = ast.parse(source)
    wanted = [
        node
        for node in tree.body
        if isinstance(node, (ast.ClassDef, ast.AsyncFunctionDef)) and node.name in ("FrameReader", "send_all")
    ]
    namespace: dict[str, Any] = {
        "trio": trio,
        "os": os,
        "time": time,
        "NoReturn": NoReturn,
        "ConnectionClosed": ConnectionClosed,
        "_LENGTH": _LENGTH,
        "_READ_CHUNK": 65536,
        "__name__": "bench.framing.before",
    }
    future = ast.ImportFrom("__future__", [ast.alias("annotations")], 0)
    module = ast.fix_missing_locations(ast.Module(body=[future, *wanted], type_ignores=[]))
    exec(compile(module, f"<shim/server.py at {BEFORE}>", "exec"), namespace)  # our own history, not input
    return namespace


async def serve(port_file: Path, busy_poll_s: float) -> None:
    """Both framings, each on a port of its own; the ports go to `port_file`."""
    import trio

    from kafka_shim.shim.net import framing

    before = old_framing()
    memory = framing.MemoryGate(100 << 20)  # queued.max.request.bytes' default

    async def answer(frame: bytes) -> bytes:
        size = _LENGTH.unpack_from(frame)[0]  # the client asks for a response of this size
        return _LENGTH.pack(size) + bytes(size)

    async def today(stream: trio.SocketStream) -> None:
        reader = framing.FrameReader(stream.socket, 200 << 20, memory, busy_poll_s)
        try:
            while True:
                frame = await reader.next_frame()
                reader.waiting_on = ""
                response = await answer(frame)
                reader.frame_handled()
                await framing.send_all(stream.socket, response, reader)
                reader.mark_active()
        except framing.ConnectionClosed:
            pass
        finally:
            reader.close()

    async def earlier(stream: trio.SocketStream) -> None:
        reader = before["FrameReader"](stream.socket, 200 << 20, busy_poll_s)
        try:
            while True:
                frame = await reader.next_frame()
                await before["send_all"](stream.socket, await answer(frame))
        except framing.ConnectionClosed:
            pass

    async with trio.open_nursery() as nursery:
        listeners = []
        for handler in (earlier, today):
            found = await nursery.start(partial(trio.serve_tcp, handler, 0, host="127.0.0.1"))
            listeners.append(found[0].socket.getsockname()[1])
        port_file.write_text(" ".join(map(str, listeners)))


def ping_pong(port: int, request: int, response: int, seconds: float, counts: list[int], index: int) -> None:
    frame = _LENGTH.pack(request) + _LENGTH.pack(response) + bytes(request - 4)
    with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        deadline = time.perf_counter() + seconds
        done = 0
        while time.perf_counter() < deadline:
            sock.sendall(frame)
            want = 4 + response
            got = 0
            while got < want:
                chunk = sock.recv(min(want - got, 1 << 20))
                if not chunk:
                    raise ConnectionError("server closed")
                got += len(chunk)
            done += 1
        counts[index] = done


def one_round(
    pid: int, port: int, workload: tuple[str, int, int], seconds: float, connections: int
) -> tuple[float, float]:
    """(requests/s, server CPU µs per request) of `connections` clients for `seconds`."""
    _, request, response = workload
    counts = [0] * connections
    threads = [
        threading.Thread(target=ping_pong, args=(port, request, response, seconds, counts, i))
        for i in range(connections)
    ]
    cpu_before, started = main_thread_cpu_ns(pid), time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    elapsed, cpu = time.perf_counter() - started, main_thread_cpu_ns(pid) - cpu_before
    total = sum(counts)
    return total / elapsed, cpu / 1000 / max(total, 1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=12)
    parser.add_argument("--seconds", type=float, default=1.0, help="length of one round of one framing")
    parser.add_argument("--connections", type=int, default=4)
    parser.add_argument(
        "--busy-poll-us",
        type=int,
        default=0,
        help="both readers' busy polling (the broker's default is 500; its spinning is CPU spent on"
        " purpose, which would blur the framing's own cost)",
    )
    parser.add_argument("--serve", type=Path, help=argparse.SUPPRESS)  # the server process
    args = parser.parse_args()
    if args.serve:
        import trio

        trio.run(serve, args.serve, args.busy_poll_us / 1e6)
        return

    port_file = Path(f"/tmp/kafka-shim-framing-{os.getpid()}.ports")
    server = subprocess.Popen(
        [sys.executable, "-m", "bench.framing", "--serve", str(port_file)], cwd=REPO_ROOT
    )
    try:
        deadline = time.monotonic() + 60
        while not port_file.exists() or not port_file.read_text():
            if server.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("the framing server did not start")
            time.sleep(0.05)
        ports = dict(zip(("before", "today"), map(int, port_file.read_text().split()), strict=True))
        print(f"framing before ({BEFORE}) and today, {args.rounds} rounds of {args.seconds:g} s each,")
        print(f"{args.connections} connections, busy polling {args.busy_poll_us} µs; medians, today/before\n")
        for workload in WORKLOADS:
            samples: dict[str, list[tuple[float, float]]] = {"before": [], "today": []}
            for round_index in range(args.rounds):
                order = ("before", "today") if round_index % 2 == 0 else ("today", "before")
                for name in order:
                    samples[name].append(
                        one_round(server.pid, ports[name], workload, args.seconds, args.connections)
                    )
            rate = {name: median(s[0] for s in values) for name, values in samples.items()}
            cpu = {name: median(s[1] for s in values) for name, values in samples.items()}
            print(
                f"{workload[0]:<24} requests/s {rate['before']:>8,.0f} -> {rate['today']:>8,.0f}"
                f" ({rate['today'] / rate['before']:.3f}x)   server CPU/request {cpu['before']:7.1f} ->"
                f" {cpu['today']:7.1f} µs ({cpu['today'] / cpu['before']:.3f}x)",
                flush=True,
            )
    finally:
        server.terminate()
        server.wait(30)
        port_file.unlink(missing_ok=True)


if __name__ == "__main__":
    main()
