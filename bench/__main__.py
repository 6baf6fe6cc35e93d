"""The headline figures, kafka-shim beside Tansu in one run, written into docs/performance.md.

    python -m bench [--quick] [--no-write]

Runs, reusing the benchmark modules (each also runs alone):
- start-up to the first answered ApiVersions (bench.startup): console on, off, on disk;
- broker CPU per request and requests/s by kind over one connection (bench.request_cpu);
- OffsetCommit and Produce from one connection sending 8 at a time;
- OffsetCommit and Produce rates from 1, 8 and 64 connections, each its own client (group or
  partition) with one request in flight, routed as clients route (bench.connections), for
  kafka-shim in one process and with one process per broker (`--brokers 2
  --process-per-broker`), and at 64 connections the broker's CPU per request and the cores
  it used (whether the processes use more than one);
- produce and fetch MB/s and broker CPU per MB (bench.fetch_throughput's producer and raw Fetch
  client);
- subscribe to first message of a new group: KIP-848 (group.protocol=consumer) on kafka-shim,
  classic on both (bench.group_formation; Tansu has no KIP-848 groups).
The table (with the commit and the machine it ran on) replaces the one between the markers in
docs/performance.md unless --no-write; it is printed either way. The default run takes a few
minutes; --quick is a smoke run of the same rows with tiny counts.
"""

from __future__ import annotations

import argparse
import os
import platform
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from statistics import median

from bench.common import BROKERS, measure_interleaved, process_cpu_s, running
from bench.startup import shim_tree
from compat.targets import REPO_ROOT, Broker, RunningBroker, TargetUnavailable

DOC = REPO_ROOT / "docs" / "performance.md"
BEGIN = "<!-- python -m bench: begin (written by bench/__main__.py) -->"
END = "<!-- python -m bench: end -->"


@dataclass(frozen=True)
class Sizes:
    startup_runs: int
    requests: int  # per kind, connection count and round
    rounds: int
    records: int  # produced, then fetched, for MB/s


DEFAULT = Sizes(startup_runs=5, requests=4000, rounds=3, records=300_000)
QUICK = Sizes(startup_runs=1, requests=300, rounds=1, records=20_000)


@dataclass(frozen=True)
class Row:
    figure: str
    values: dict[str, float]  # broker -> value
    unit: str
    higher_is_better: bool
    command: str

    def cells(self) -> list[str]:
        shim, tansu = self.values.get("shim"), self.values.get("tansu")
        ratio = f"{shim / tansu:.2f}x" if shim is not None and tansu else ""
        return [self.figure, _number(shim, self.unit), _number(tansu, self.unit), ratio, f"`{self.command}`"]


def _number(value: float | None, unit: str) -> str:
    if value is None:
        return "n/a"
    digits = 2 if unit == "cores" else 0 if abs(value) >= 100 else 1
    return f"{value:,.{digits}f} {unit}"


def startup_rows(sizes: Sizes) -> list[Row]:
    from bench.startup import measure

    return [
        Row(
            f"start-up to first ApiVersions: {label} (median of {sizes.startup_runs})",
            values,
            "ms",
            False,
            "python -m bench.startup",
        )
        for label, values in measure(sizes.startup_runs).items()
    ]


KINDS = ("OffsetCommit", "Heartbeat", "Produce", "Fetch")
PIPELINE_KINDS = ("OffsetCommit", "Produce")
PIPELINE = 8


def request_rows(sizes: Sizes) -> list[Row]:
    """Per-request CPU and rate by kind (one connection) and one connection pipelining,
    every broker running throughout and rounds alternating."""
    from bench.request_cpu import cpu_and_rate

    # (kind, connections, requests in flight on each)
    shapes = [(kind, 1, 1) for kind in KINDS]
    shapes += [(kind, 1, PIPELINE) for kind in PIPELINE_KINDS]

    def one_round(broker: Broker) -> dict[tuple[str, int, int], tuple[float, float]]:
        return {shape: cpu_and_rate(broker, shape[0], sizes.requests, *shape[1:]) for shape in shapes}

    samples = measure_interleaved(one_round, sizes.rounds)
    rows = []
    for index, what, unit, higher in (
        (0, "broker CPU per request", "µs", False),
        (1, "requests/s", "/s", True),
    ):
        for shape in shapes:
            kind, count, pipeline = shape
            over = f"{count} connection{'s' if count > 1 else ''}"
            flags = f" --connections {count}" if count > 1 else ""
            if pipeline > 1:
                over += f", {pipeline} pipelined"
                flags += f" --pipeline {pipeline}"
            values = {name: median(run[shape][index] for run in runs) for name, runs in samples.items()}
            command = f"python -m bench.request_cpu{flags}" + (f" --kinds {kind}" if flags else "")
            rows.append(Row(f"{kind}: {what}, {over}", values, unit, higher, command))
    return rows


def connection_rows(sizes: Sizes) -> list[Row]:
    """OffsetCommit and Produce rates from 1, 8 and 64 connections (each its own client), for
    kafka-shim in one process and with a process per broker, beside Tansu; the CPU per request
    at 64 connections (what docs/performance.md's model of 8 and 32 cores starts from)."""
    from bench.connections import COUNTS, PROCESSES, measure, medians

    samples = measure(sizes.requests, sizes.rounds)
    cpu, rates = dict(medians(samples, 0)), dict(medians(samples, 1))
    command = "python -m bench.connections"
    variants = {"shim": "", "shim-processes": f", --brokers {PROCESSES} --process-per-broker"}
    rows = []
    for (kind, count), values in rates.items():
        over = f"{count} connection{'s' if count > 1 else ''}, each its own client"
        for name, flags in variants.items():
            pair = _present({"shim": values.get(name), "tansu": values.get("tansu")})
            rows.append(Row(f"{kind}: requests/s, {over}{flags}", pair, "/s", True, command))
    for (kind, count), values in cpu.items():
        if count != max(COUNTS):
            continue
        # Cores: the broker's CPU over the wall time, each round's (CPU per request x rate):
        # whether the processes use more than one core between them.
        cores = {
            name: median(run[kind, count][0] * run[kind, count][1] / 1e6 for run in runs)
            for name, runs in samples.items()
        }
        for name, flags in variants.items():
            pair = _present({"shim": values.get(name), "tansu": values.get("tansu")})
            what = f"{kind}: broker CPU per request, {count} connections{flags}"
            rows.append(Row(what, pair, "µs", False, command))
            pair = _present({"shim": cores.get(name), "tansu": cores.get("tansu")})
            what = f"{kind}: broker cores used, {count} connections{flags}"
            rows.append(Row(what, pair, "cores", True, command))
    return rows


def throughput_rows(sizes: Sizes) -> list[Row]:
    """Produce (librdkafka, large batches, acks=1) then a raw Fetch client reading it all back."""
    from bench.commits import create_topic
    from bench.fetch_throughput import MB, VALUE_BYTES, produce, raw_read

    megabytes = sizes.records * VALUE_BYTES / MB
    produced: dict[str, list[tuple[float, float]]] = {}
    fetched: dict[str, list[tuple[float, float]]] = {}

    def one_round(broker: Broker) -> None:
        assert isinstance(broker, RunningBroker) and broker.process is not None
        topic = f"bench-mb-{uuid.uuid4().hex[:8]}"
        create_topic(broker.bootstrap, topic, 1)
        cpu, started = process_cpu_s(broker.process.pid), time.perf_counter()
        produce(broker, topic, sizes.records)
        wall = time.perf_counter() - started
        produced.setdefault(broker.name, []).append((wall, process_cpu_s(broker.process.pid) - cpu))
        fetched.setdefault(broker.name, []).append(raw_read(broker, topic, sizes.records, None))

    measure_interleaved(one_round, sizes.rounds)
    rows = []
    for what, samples, command in (
        ("produce (librdkafka, acks=1, 100 B records)", produced, "python -m bench.fetch_throughput"),
        ("fetch (raw Fetch client, from disk)", fetched, "python -m bench.fetch_throughput"),
    ):
        rate = {name: megabytes / median(wall for wall, _ in runs) for name, runs in samples.items()}
        per_mb = {name: 1e3 * median(cpu for _, cpu in runs) / megabytes for name, runs in samples.items()}
        rows.append(Row(f"{what}: MB/s", rate, "MB/s", True, command))
        rows.append(Row(f"{what}: broker CPU per MB", per_mb, "ms", False, command))
    return rows


def join_rows(sizes: Sizes) -> list[Row]:
    """Seconds from subscribe to the first message of a new group (confluent-kafka defaults)."""
    from bench.group_formation import seconds_to_first_message

    def timed(name: str, protocol: str) -> float | None:
        try:
            with running(name) as broker:
                return median(seconds_to_first_message(broker, 60.0, protocol) for _ in range(sizes.rounds))
        except TargetUnavailable as exc:
            print(f"  {name}: unavailable ({str(exc).splitlines()[0]})")
            return None

    consumer = timed("shim", "consumer")
    classic = {name: timed(name, "classic") for name in BROKERS}
    command = "python -m bench.group_formation"
    rows = [
        Row(
            "new group, subscribe to first message: KIP-848 (kafka-shim) vs classic (Tansu has no KIP-848)",
            _present({"shim": consumer, "tansu": classic["tansu"]}),
            "s",
            False,
            command,
        ),
        Row("new group, subscribe to first message: classic, both", _present(classic), "s", False, command),
    ]
    return rows


def _present(values: dict[str, float | None]) -> dict[str, float]:
    return {name: value for name, value in values.items() if value is not None}


SECTIONS: dict[str, Callable[[Sizes], list[Row]]] = {
    "start-up": startup_rows,
    "requests": request_rows,
    "connections": connection_rows,
    "throughput": throughput_rows,
    "groups": join_rows,
}


def commit() -> str:
    """The commit measured, marked when the tree has changes beyond it."""
    tree = shim_tree()

    def git(*args: str) -> str:
        return subprocess.run(["git", *args], cwd=tree, capture_output=True, text=True).stdout.strip()

    head = git("rev-parse", "--short=12", "HEAD") or "unknown"
    # The broker's code: kafka_shim/ (older checkouts: the top-level folders it links to).
    layers = ("kafka_shim", "shim", "protocol", "storage")
    dirty = git("status", "--porcelain", "--untracked-files=no", "--", *layers)
    return f"{head} (with uncommitted changes)" if dirty else head


def machine() -> str:
    model = next(
        (
            line.split(":", 1)[1].strip()
            for line in _read("/proc/cpuinfo").splitlines()
            if line.startswith("model name")
        ),
        platform.processor() or "unknown CPU",
    )
    system = f"{platform.system()} {platform.release()}"
    return f"{os.cpu_count()} cores ({model}), {system}, Python {platform.python_version()}"


def _read(path: str) -> str:
    try:
        return Path(path).read_text()
    except OSError:
        return ""


def load_average() -> str:
    return " ".join(f"{value:.1f}" for value in os.getloadavg())


def table(rows: list[Row], header: list[str]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(row.cells()) + " |" for row in rows]
    return "\n".join(lines)


def render(rows: list[Row], started: datetime, load_before: str, minutes: float) -> str:
    return "\n".join(
        [
            BEGIN,
            f"Commit {commit()}, {started:%Y-%m-%d %H:%M} UTC, {machine()}; load average "
            f"{load_before} before the run, {load_average()} after; {minutes:.1f} minutes. kafka-shim runs "
            "as `compat.targets` starts it (on disk, console on), Tansu in memory; medians of interleaved "
            "rounds; CPU is the broker's processes' run time, busy polling included, in ns from the "
            "kernel's CPU clock of each process (exited threads included); `--process-per-broker` "
            "rows: two broker processes and their supervisor. "
            "Regenerate with `python -m bench`.",
            "",
            table(rows, ["figure", "kafka-shim", "Tansu", "kafka-shim/Tansu", "alone"]),
            END,
        ]
    )


def write_into(doc: Path, block: str) -> None:
    """Replace the block between the markers (or append one with a heading)."""
    text = doc.read_text()
    if BEGIN in text and END in text:
        before, rest = text.split(BEGIN, 1)
        text = before + block + rest.split(END, 1)[1]
    else:
        text = text.rstrip("\n") + "\n\n## The headline table (`python -m bench`)\n\n" + block + "\n"
    doc.write_text(text)


def main() -> None:
    parser = argparse.ArgumentParser(
        prog="python -m bench", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="tiny counts: a smoke run of every row")
    parser.add_argument("--no-write", action="store_true", help=f"print only, leave {DOC.name} alone")
    parser.add_argument("--only", choices=list(SECTIONS), action="append", help="run these sections only")
    parser.add_argument(
        "--shim-tree",
        metavar="DIR",
        help="run kafka-shim from this checkout (e.g. a `git worktree` of an older commit), to "
        "compare; printed only",
    )
    args = parser.parse_args()
    if args.shim_tree:
        # PYTHONSAFEPATH: `python -m kafka_shim` would otherwise import this checkout first.
        os.environ.update({"PYTHONPATH": str(Path(args.shim_tree).resolve()), "PYTHONSAFEPATH": "1"})
    sizes = QUICK if args.quick else DEFAULT
    started, clock, load_before = datetime.now(UTC), time.monotonic(), load_average()
    rows: list[Row] = []
    for name, section in SECTIONS.items():
        if args.only and name not in args.only:
            continue
        print(f"== {name}", flush=True)
        section_rows = section(sizes)
        for row in section_rows:
            print(" | ".join(row.cells()), flush=True)
        rows += section_rows
    block = render(rows, started, load_before, (time.monotonic() - clock) / 60)
    if args.no_write or args.quick or args.only or args.shim_tree:
        print(block)
        return
    write_into(DOC, block)
    print(f"written into {DOC}", file=sys.stderr)


if __name__ == "__main__":
    main()
