"""Fuzz campaign: a million structure-aware, mutated frames against a running kafka-shim.

    python -m bench.fuzz [--frames 1000000] [--connections 32] [--seed 1]
    python -m bench.fuzz --in-process [--runs 300000]

The campaign starts a broker (`python -m kafka_shim --memory`, its log in a file),
then sends frames from `bench.fuzz_frames` (every API and version, every mutation
class) over many concurrent connections, while a neighbour process keeps producing,
committing and heartbeating as a real group member (and deletes the records it produced
every 500 rounds, as retention would) and times every request. It
reports frames/s, what the broker did with the frames (answered, closed, held), the
neighbour's failures and latency percentiles, the broker's RSS before, at peak and
after (before and after: once the broker's periodic heap release has run since the
burst), and the tracebacks and errors in its log. Only 127.0.0.1 is contacted.

`--in-process` fuzzes the decoders (request header, then the body for the API and
version the header names) with atheris, coverage-guided, seeded with generated
frames: anything but the protocol's own `ProtocolError` is a finding.
"""

from __future__ import annotations

import argparse
import contextlib
import multiprocessing
import re
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
import types
import uuid
from collections import Counter
from multiprocessing.synchronize import Event
from pathlib import Path
from statistics import quantiles
from typing import Any

from bench.fuzz_frames import FrameGenerator, decode_request
from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.protocol.record_codec import Record, encode_batch
from kafka_shim.shim.limits import HEAP_RELEASE_EVERY_S
from tests.wire import WireClient, encode_request

REPO_ROOT = Path(__file__).resolve().parents[1]
# A frame the broker holds (a JoinGroup waiting for members, a long-polling Fetch, an acks=0
# Produce that gets no answer) is given this long before the sender moves on.
ANSWER_WAIT_S = 0.05
NEIGHBOUR_PERIOD_S = 0.02
PRODUCE, OFFSET_COMMIT, JOIN_GROUP, HEARTBEAT, SYNC_GROUP, CREATE_TOPICS = 0, 8, 11, 12, 14, 19
DELETE_RECORDS = 21
# The broker runs in memory, where every produced byte stays in RSS: the neighbour deletes
# what it has produced every this many rounds, as retention would on disk, so that the
# campaign's RSS is the broker's and not its data's.
TRIM_EVERY_ROUNDS = 500
# The RSS baseline and the final RSS are read once the broker has had one period of its heap
# release (the reaper's malloc_trim) after a burst, with the neighbour still running: what
# glibc keeps of freed memory until then is read too, right after each burst, and printed
# beside. Without this the end was read 2 s after the last frame and the start 1 s after the
# warm-up, each with whatever free pages the last trim had not yet returned.
SETTLE_S = HEAP_RELEASE_EVERY_S + 2
HELLO = encode_request(18, 3, 0, {"client_software_name": "fuzz", "client_software_version": "1"})


def rss_bytes(pid: int) -> int:
    match = re.search(r"VmRSS:\s+(\d+) kB", Path(f"/proc/{pid}/status").read_text())
    return int(match.group(1)) * 1024 if match else 0


def open_fds(pid: int) -> int:
    return len(list(Path(f"/proc/{pid}/fd").iterdir()))


class BrokerProcess:
    """`python -m kafka_shim` on a free loopback port, its output in `log_path`; `args` are
    its storage flags and any others; `tree` is the source tree it runs from."""

    def __init__(self, log_path: Path, args: tuple[str, ...] = ("--memory",), tree: Path = REPO_ROOT) -> None:
        self.log_path = log_path
        self._log = log_path.open("w")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "kafka_shim", "--port", "0", "--host", "127.0.0.1", *args],
            cwd=tree,
            stdout=self._log,
            stderr=subprocess.STDOUT,
        )
        deadline = time.monotonic() + 30
        while True:
            match = re.search(r"listening on (\S+)", log_path.read_text())
            if match:
                self.bootstrap = match.group(1)
                break
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"kafka-shim did not start: {log_path.read_text()}")
            time.sleep(0.05)
        host, port = self.bootstrap.rsplit(":", 1)
        self.address = (host, int(port))

    def stop(self) -> int | None:
        """Stop it; its exit code if it had already died."""
        died = self.proc.poll()
        if died is None:
            self.proc.terminate()
            self.proc.wait(30)
        self._log.close()
        return died


# --- the neighbour: a well-behaved client that must not notice the fuzzing --------------------


class Neighbour:
    """A group member with one partition: Produce (acks=1), OffsetCommit, Heartbeat."""

    def __init__(self, bootstrap: str) -> None:
        self.client = WireClient(bootstrap, timeout_s=10)
        suffix = uuid.uuid4().hex[:8]
        self.topic, self.group = f"neighbour-{suffix}", f"neighbour-{suffix}"
        self.batch = encode_batch([Record(0, int(time.time() * 1000), None, b"n" * 100)])
        created = self.client.request(
            CREATE_TOPICS,
            5,
            {"topics": [{"name": self.topic, "num_partitions": 1, "replication_factor": 1}]},
        )
        assert created.topics[0].error_code == ErrorCode.NONE, created
        self.member_id, self.generation = self._join()
        self.offset = 0
        self.rounds = 0

    def _join(self) -> tuple[str, int]:
        join = {
            "group_id": self.group,
            "session_timeout_ms": 30_000,
            "rebalance_timeout_ms": 30_000,
            "member_id": "",
            "protocol_type": "consumer",
            "protocols": [{"name": "range", "metadata": b""}],
        }
        joined = self.client.request(JOIN_GROUP, 5, join)
        if joined.error_code == ErrorCode.MEMBER_ID_REQUIRED:
            joined = self.client.request(JOIN_GROUP, 5, {**join, "member_id": joined.member_id})
        assert joined.error_code == ErrorCode.NONE, joined
        synced = self.client.request(
            SYNC_GROUP,
            3,
            {
                "group_id": self.group,
                "generation_id": joined.generation_id,
                "member_id": joined.member_id,
                "assignments": [{"member_id": joined.member_id, "assignment": b""}],
            },
        )
        assert synced.error_code == ErrorCode.NONE, synced
        return joined.member_id, joined.generation_id

    def cycle(self) -> list[tuple[str, float, bool]]:
        """One round of requests: (what, seconds, succeeded) for each."""
        timed: list[tuple[str, float, bool]] = []

        def timed_request(what: str, key: int, version: int, body: dict[str, Any]) -> Any:
            started = time.perf_counter()
            response = self.client.request(key, version, body)
            timed.append((what, time.perf_counter() - started, _succeeded(response)))
            return response

        produced = timed_request(
            "produce",
            PRODUCE,
            9,
            {
                "acks": 1,
                "timeout_ms": 5000,
                "topic_data": [{"name": self.topic, "partition_data": [{"index": 0, "records": self.batch}]}],
            },
        )
        self.offset = produced.responses[0].partition_responses[0].base_offset + 1
        timed_request(
            "commit",
            OFFSET_COMMIT,
            8,
            {
                "group_id": self.group,
                "generation_id_or_member_epoch": self.generation,
                "member_id": self.member_id,
                "topics": [
                    {
                        "name": self.topic,
                        "partitions": [{"partition_index": 0, "committed_offset": self.offset}],
                    }
                ],
            },
        )
        timed_request(
            "heartbeat",
            HEARTBEAT,
            4,
            {"group_id": self.group, "generation_id": self.generation, "member_id": self.member_id},
        )
        self.rounds += 1
        if self.rounds % TRIM_EVERY_ROUNDS == 0:
            partitions = [{"partition_index": 0, "offset": self.offset}]
            timed_request(
                "trim",
                DELETE_RECORDS,
                2,
                {"topics": [{"name": self.topic, "partitions": partitions}], "timeout_ms": 5000},
            )
        return timed


def _succeeded(response: Any) -> bool:
    """No error code anywhere in the response."""
    if isinstance(response, dict):
        if response.get("error_code", 0) != 0:
            return False
        return all(_succeeded(v) for v in response.values() if isinstance(v, (dict, list)))
    if isinstance(response, list):
        return all(_succeeded(v) for v in response)
    return True


def run_neighbour(bootstrap: str, stop: Event, results: Any) -> None:
    latencies: dict[str, list[float]] = {}
    failures: list[str] = []
    try:
        neighbour = Neighbour(bootstrap)
        results.put(("ready", None))
        while not stop.is_set():
            for what, seconds, ok in neighbour.cycle():
                latencies.setdefault(what, []).append(seconds)
                if not ok:
                    failures.append(what)
            time.sleep(NEIGHBOUR_PERIOD_S)
    except Exception as exc:  # reported, not raised: the campaign counts it as a failure
        failures.append(repr(exc))
        results.put(("ready", None))
    results.put(("done", (latencies, failures)))


# --- the fuzzing senders -----------------------------------------------------------------------


class Tally:
    def __init__(self) -> None:
        self.outcomes: Counter[str] = Counter()
        self.by_mutation: Counter[tuple[str, str]] = Counter()
        self.lock = threading.Lock()

    def add(self, mutation: str, outcome: str) -> None:
        with self.lock:
            self.outcomes[outcome] += 1
            self.by_mutation[(mutation, outcome)] += 1


def _answer_or_close(sock: socket.socket) -> str:
    """Read one response frame: "answered", "closed" by the broker, or "held" (no answer
    within the socket's timeout)."""
    data = bytearray()
    try:
        while len(data) < 4 or len(data) < 4 + int.from_bytes(data[:4], "big"):
            chunk = sock.recv(65536)
            if not chunk:
                return "closed"
            data += chunk
    except TimeoutError:
        return "held"
    except ConnectionResetError:
        return "closed"
    return "answered"


def _served_connection(address: tuple[str, int]) -> socket.socket:
    """A connection the broker has accepted and answered on, as a client's first ApiVersions.
    Waiting for that answer paces the senders to what the broker serves: senders that gave
    up on connections still in the listen backlog would fill it with dead ones, and the
    broker would spend itself answering clients long gone."""
    sock = socket.create_connection(address, timeout=60)
    sock.sendall(struct.pack(">i", len(HELLO)) + HELLO)
    if _answer_or_close(sock) != "answered":
        sock.close()
        raise ConnectionError("ApiVersions not answered")
    sock.settimeout(ANSWER_WAIT_S)
    return sock


def send_frames(address: tuple[str, int], seed: int, count: int, tally: Tally) -> None:
    generate = FrameGenerator(seed).frame
    sock: socket.socket | None = None
    for _ in range(count):
        _, _, mutation, frame = generate()
        try:
            if sock is None:
                sock = _served_connection(address)
            sock.sendall(frame)
        except OSError as exc:  # counted and retried: a sender never gives up the campaign
            outcome = "closed" if isinstance(exc, (BrokenPipeError, ConnectionResetError)) else "failed"
        else:
            outcome = _answer_or_close(sock)
        tally.add(mutation, outcome)
        if outcome != "answered" and sock is not None:  # closed, or holding a request: start afresh
            sock.close()
            sock = None
    if sock is not None:
        sock.close()


def start_senders(
    address: tuple[str, int], first_seed: int, frames: int, connections: int, tally: Tally
) -> list[threading.Thread]:
    senders = [
        threading.Thread(target=send_frames, args=(address, first_seed + i, frames // connections, tally))
        for i in range(connections)
    ]
    for sender in senders:
        sender.start()
    return senders


def percentile(values: list[float], q: int) -> float:
    return quantiles(values, n=100)[q - 1] if len(values) >= 2 else (values[0] if values else 0.0)


def campaign(frames: int, connections: int, seed: int, warmup: int) -> int:
    log_path = Path(tempfile.mkdtemp(prefix="kafka-shim-fuzz-")) / "broker.log"
    broker = BrokerProcess(log_path)
    context = multiprocessing.get_context("spawn")
    stop = context.Event()
    results = context.Queue()
    neighbour = context.Process(target=run_neighbour, args=(broker.bootstrap, stop, results))
    neighbour.start()
    assert results.get(timeout=60)[0] == "ready"
    # Handlers are imported and codecs compiled on first use: the baseline is taken after a
    # warm-up that has reached every API and version, not before the code is even loaded.
    warm = start_senders(broker.address, seed * 1000 + connections, warmup, connections, Tally())
    for sender in warm:
        sender.join()
    rss_after_warmup = rss_bytes(broker.proc.pid)
    time.sleep(SETTLE_S)
    rss_start, fds_start = rss_bytes(broker.proc.pid), open_fds(broker.proc.pid)
    rss_peak = rss_start
    tally = Tally()
    started = time.perf_counter()
    senders = start_senders(broker.address, seed * 1000, frames, connections, tally)
    rss_trace: list[tuple[int, int]] = []  # (frames sent, RSS): growth per frame, or a plateau?
    while any(s.is_alive() for s in senders):
        time.sleep(1.0)
        if broker.proc.poll() is None:
            rss_trace.append((sum(tally.outcomes.values()), rss_bytes(broker.proc.pid)))
            rss_peak = max(rss_peak, rss_trace[-1][1])
        done = sum(tally.outcomes.values())
        print(f"  {done:>9,} frames  {done / (time.perf_counter() - started):>7,.0f}/s", end="\r", flush=True)
    elapsed = time.perf_counter() - started
    sent = sum(tally.outcomes.values())
    rss_after_frames = rss_bytes(broker.proc.pid) if broker.proc.poll() is None else 0
    time.sleep(SETTLE_S)  # the neighbour keeps going while the broker settles
    stop.set()
    _, (latencies, failures) = results.get(timeout=60)
    neighbour.join(30)
    alive = broker.proc.poll() is None
    rss_end, fds_end = (rss_bytes(broker.proc.pid), open_fds(broker.proc.pid)) if alive else (0, 0)
    died = broker.stop()
    log_text = log_path.read_text()

    print(
        f"\nfuzz campaign, seed {seed}: {sent:,} frames over {connections} connections in {elapsed:.0f} s"
        f" (after {warmup:,} warm-up frames)"
    )
    print(f"  frames/s                        {sent / elapsed:,.0f}")
    print(f"  broker outcomes                 {dict(tally.outcomes)}")
    print(f"  broker crashes                  {0 if died is None and alive else 1}")
    print(f"  tracebacks in the log           {log_text.count('Traceback')}")
    print(f"  ERROR lines in the log          {sum(' ERROR ' in line for line in log_text.splitlines())}")
    print(f"  connection-close lines logged   {log_text.count('closing connection')} (rate-limited)")
    mib = " / ".join(f"{value / 2**20:.1f}" for value in (rss_start, rss_peak, rss_end))
    print(f"  RSS start / peak / end          {mib} MiB (settled: {SETTLE_S:.0f} s after each burst)")
    unsettled = " / ".join(f"{value / 2**20:.1f}" for value in (rss_after_warmup, rss_after_frames))
    print(f"  RSS right after warm-up / frames {unsettled} MiB (before the heap release)")
    if rss_start:
        print(f"  RSS end vs start                {(rss_end - rss_start) / rss_start:+.1%}")
    quarters = [next((r for n, r in rss_trace if n >= sent * q / 4), rss_end) for q in (1, 2, 3)]
    print(f"  RSS at 1/4, 1/2, 3/4 of frames  {' / '.join(f'{r / 2**20:.1f}' for r in quarters)} MiB")
    print(f"  open fds start / end            {fds_start} / {fds_end}")
    print(f"  neighbour failed requests       {len(failures)} {failures[:5]}")
    for what, values in sorted(latencies.items()):
        print(
            f"  neighbour {what:<9} n={len(values):>6}  p50 {percentile(values, 50) * 1000:6.1f} ms"
            f"  p99 {percentile(values, 99) * 1000:6.1f} ms  max {max(values) * 1000:6.1f} ms"
        )
    print(f"  sender connection failures      {tally.outcomes['failed']}")
    print("  by mutation (answered / closed / held):")
    for mutation in sorted({m for m, _ in tally.by_mutation}):
        counts = [tally.by_mutation[(mutation, o)] for o in ("answered", "closed", "held")]
        print(f"    {mutation:<18} {counts[0]:>8,} {counts[1]:>8,} {counts[2]:>8,}")
    print(f"  broker log: {log_path}")
    return 0 if alive and "Traceback" not in log_text and not failures else 1


# --- coverage-guided, in process ----------------------------------------------------------------


def in_process(runs: int, seed: int) -> int:
    import atheris

    from kafka_shim.protocol.types import ProtocolError
    from kafka_shim.shim.handlers import ADVERTISED_APIS

    generate = FrameGenerator(seed).frame
    corpus = Path(tempfile.mkdtemp(prefix="kafka-shim-corpus-"))
    for index in range(2000):
        (corpus / f"seed-{index}").write_bytes(generate()[3][4:])
    generated: list[types.FunctionType] = []
    for api in ADVERTISED_APIS.values():  # derive every codec before instrumenting
        for version in range(api.versions.low, api.versions.high + 1):
            namespace = api.request.codec(version).parse.__globals__
            generated += [
                f
                for f in namespace.values()
                if isinstance(f, types.FunctionType) and f.__code__.co_filename.startswith("<codec")
            ]

    def decode(data: bytes) -> None:
        with contextlib.suppress(ProtocolError):
            decode_request(data)

    atheris.instrument_all()
    for function in generated:  # exec'd code has no file: instrument_all passes it by
        atheris.instrument_func(function)
    atheris.Setup([sys.argv[0], f"-runs={runs}", f"-seed={seed}", "-max_len=4096", str(corpus)], decode)
    atheris.Fuzz()  # exits the process: 0 when every run raised nothing but ProtocolError
    return 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--frames", type=int, default=1_000_000)
    parser.add_argument("--connections", type=int, default=32)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--warmup", type=int, default=20_000, help="frames sent before the RSS baseline")
    parser.add_argument("--in-process", action="store_true", help="coverage-guided decoder fuzzing (atheris)")
    parser.add_argument("--runs", type=int, default=300_000, help="atheris runs for --in-process")
    args = parser.parse_args()
    if args.in_process:
        sys.exit(in_process(args.runs, args.seed))
    sys.exit(campaign(args.frames, args.connections, args.seed, args.warmup))


if __name__ == "__main__":
    main()
