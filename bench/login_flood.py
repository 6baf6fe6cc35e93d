"""A login flood beside a group member: 1,000 SASL/PLAIN logins with a wrong password over 50
connections at once (from a process of its own), while a neighbour (logged in, the one member
of a classic group) sends a Heartbeat every 10 ms. Printed: the neighbour's heartbeat round
trip (median, p99, max) with and without the flood, and how long the flood took, for
kafka-shim (a SASL_PLAINTEXT listener, the flood's user known, so every login derives keys)
and for Tansu in the same run. The machine's load shows in every column alike: the rounds
interleave the brokers, and the medians of rounds are printed.

Tansu cannot be the peer it should be: it has no users to check here (`tansu user create`
against a Tansu started with --authentication is refused, see bench/security.py), and without
them it answers SaslHandshake(PLAIN) with UNSUPPORTED_SASL_MECHANISM (33) and the token with
ILLEGAL_SASL_STATE (34). It gets the same frames over the same connections, so its row shows
what the flood's traffic alone costs a neighbour, with no key derivation in it.

With --before DIR (a kafka-shim source tree, e.g. `git archive <commit> | tar -x -C DIR`) that
tree's broker is measured as a third column, so a change is seen beside the figure before it.

    python -m bench.login_flood [--logins 1000] [--connections 50] [--rounds 3] [--before DIR]
        [--iterations 4096]
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import multiprocessing
import os
import sys
import threading
import time
from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from statistics import median, quantiles

from bench.common import print_row
from compat.targets import RunningBroker, free_port, launch, start_tansu
from tests.wire import WireClient

SASL_HANDSHAKE, SASL_AUTHENTICATE, HEARTBEAT, JOIN_GROUP, SYNC_GROUP = 17, 36, 12, 11, 14
ALTER_USER_SCRAM_CREDENTIALS = 51
USERS = {"flood": "flood-secret", "neighbour": "neighbour-secret"}
GROUP = "neighbours"
BEAT_EVERY_S = 0.010
MEMBER_ID_REQUIRED, REBALANCE_IN_PROGRESS = 79, 27


@dataclass(frozen=True)
class Target:
    name: str
    broker: RunningBroker
    sasl: bool  # whether its listener authenticates


def start_shim(name: str, source: Path | None = None) -> RunningBroker:
    """kafka-shim (this tree, or `source`) with one SASL_PLAINTEXT listener and the two users."""
    argv = [sys.executable, "-m", "kafka_shim", "--memory", "--initial-rebalance-delay-ms", "0"]
    argv += ["--listeners", f"SASL_PLAINTEXT://127.0.0.1:{free_port()}"]
    for user, password in USERS.items():
        argv += ["--user", f"{user}:{password}"]
    if source is None:
        return launch(name, argv)
    previous = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = str(source)  # the child imports kafka_shim from there
    try:
        return launch(name, argv)
    finally:
        if previous is None:
            del os.environ["PYTHONPATH"]
        else:
            os.environ["PYTHONPATH"] = previous


def login(client: WireClient, user: str, password: str) -> int:
    """SaslHandshake v1 and SaslAuthenticate v2 with PLAIN: the authenticate error code."""
    client.request(SASL_HANDSHAKE, 1, {"mechanism": "PLAIN"})
    token = f"\0{user}\0{password}".encode()
    return int(client.request(SASL_AUTHENTICATE, 2, {"auth_bytes": token}).error_code)


def join(client: WireClient) -> tuple[str, int]:
    """The neighbour's place in its group: member id and generation (a classic group of one)."""
    request = {
        "group_id": GROUP,
        "session_timeout_ms": 6_000,  # Tansu holds a join for half of it
        "rebalance_timeout_ms": 6_000,
        "member_id": "",
        "protocol_type": "consumer",
        "protocols": [{"name": "range", "metadata": b""}],
    }
    joined = client.request(JOIN_GROUP, 5, request)
    if joined.error_code == MEMBER_ID_REQUIRED:
        joined = client.request(JOIN_GROUP, 5, request | {"member_id": joined.member_id})
    assert joined.error_code == 0, joined
    assignment = [{"member_id": joined.member_id, "assignment": b""}]
    sync = {"group_id": GROUP, "generation_id": joined.generation_id, "member_id": joined.member_id}
    synced = client.request(SYNC_GROUP, 3, sync | {"assignments": assignment})
    # Tansu answers its one member's SyncGroup REBALANCE_IN_PROGRESS, then accepts its heartbeats.
    assert synced.error_code in (0, REBALANCE_IN_PROGRESS), synced
    return joined.member_id, joined.generation_id


def set_iterations(target: Target, iterations: int) -> None:
    """Give the flood's user credentials of `iterations` (Kafka allows 4096..16384): what every
    one of its logins then costs to check."""
    upsertions = [
        {
            "name": "flood",
            "mechanism": mechanism,
            "iterations": iterations,
            "salt": salt,
            "salted_password": hashlib.pbkdf2_hmac(digest, USERS["flood"].encode(), salt, iterations),
        }
        for mechanism, digest, salt in ((1, "sha256", os.urandom(16)), (2, "sha512", os.urandom(16)))
    ]
    with WireClient(target.broker.bootstrap, timeout_s=30) as client:
        assert login(client, "neighbour", USERS["neighbour"]) == 0
        for upsertion in upsertions:  # one change per user and request, as Kafka allows
            answer = client.request(
                ALTER_USER_SCRAM_CREDENTIALS, 0, {"deletions": [], "upsertions": [upsertion]}
            )
            assert answer.results[0].error_code == 0, answer


class Neighbour:
    """A logged-in member of a classic group of one, on its own connection, heartbeating every
    BEAT_EVERY_S for the whole run (so its session never lapses between measurements); its
    round trips, in milliseconds, go to whichever list `record` names."""

    def __init__(self, target: Target) -> None:
        self.client = WireClient(target.broker.bootstrap, timeout_s=30)
        if target.sasl:
            assert login(self.client, "neighbour", USERS["neighbour"]) == 0
        member_id, generation = join(self.client)
        self.beat = {"group_id": GROUP, "generation_id": generation, "member_id": member_id}
        self.record: list[float] | None = None
        self.running = True
        self.thread = threading.Thread(target=self._heartbeats, daemon=True)
        self.thread.start()

    def _heartbeats(self) -> None:
        while self.running:
            started = time.perf_counter()
            answer = self.client.request(HEARTBEAT, 3, self.beat)
            elapsed_ms = (time.perf_counter() - started) * 1000
            assert answer.error_code in (0, REBALANCE_IN_PROGRESS), answer
            if self.record is not None:
                self.record.append(elapsed_ms)
            time.sleep(BEAT_EVERY_S)

    def stop(self) -> None:
        self.running = False
        self.thread.join()
        self.client.close()


def flood(bootstrap: str, logins: int) -> None:
    """`logins` wrong-password PLAIN logins, one after another, each on a new connection (a
    failed login ends its connection, as in Kafka)."""
    for n in range(logins):
        with WireClient(bootstrap, timeout_s=30) as client, contextlib.suppress(ConnectionError):
            login(client, "flood", f"wrong-{n}")  # the broker closes the connection after refusing


@dataclass(frozen=True)
class Sample:
    quiet: list[float]  # heartbeat round trips, no flood
    flooded: list[float]  # during the flood
    flood_s: float


def flood_process(bootstrap: str, per_connection: list[int]) -> None:
    """The whole flood, one thread per connection, in a process of its own: the client's GIL
    must not delay the neighbour's heartbeats, only the broker may."""
    workers = [threading.Thread(target=flood, args=(bootstrap, count)) for count in per_connection]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()


def measure(target: Target, neighbour: Neighbour, logins: int, connections: int) -> Sample:
    quiet: list[float] = []
    neighbour.record = quiet
    time.sleep(1.0)
    flooded: list[float] = []
    per_connection = [logins // connections + (i < logins % connections) for i in range(connections)]
    flooding = multiprocessing.get_context("spawn").Process(
        target=flood_process, args=(target.broker.bootstrap, per_connection)
    )
    flooding.start()
    started = time.monotonic()
    neighbour.record = flooded
    flooding.join()
    flood_s = time.monotonic() - started
    neighbour.record = None
    assert flooding.exitcode == 0, f"the flood failed ({flooding.exitcode})"
    return Sample(quiet, flooded, flood_s)


def p99(values: list[float]) -> float:
    return quantiles(values, n=100)[98] if len(values) >= 2 else max(values)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--logins", type=int, default=1000)
    parser.add_argument("--connections", type=int, default=50)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--before", type=Path, help="a kafka-shim source tree to measure beside this one")
    parser.add_argument(
        "--iterations", type=int, default=4096, help="the flood user's SCRAM iterations (4096..16384)"
    )
    args = parser.parse_args()
    print(
        f"login flood: {args.logins} wrong-password PLAIN logins over {args.connections} connections, "
        f"the user's credentials of {args.iterations} iterations;"
    )
    print(f"a neighbour heartbeats every {BEAT_EVERY_S * 1000:.0f} ms; medians of {args.rounds} rounds")
    with ExitStack() as stack:
        targets = [Target("shim", stack.enter_context(_stopping(start_shim("shim-login"))), True)]
        if args.before is not None:
            before = start_shim("shim-before", args.before)
            targets.append(Target("before", stack.enter_context(_stopping(before)), True))
        targets.append(Target("tansu", stack.enter_context(_stopping(start_tansu())), False))
        for target in targets:
            if target.sasl:
                set_iterations(target, args.iterations)
        neighbours = {t.name: Neighbour(t) for t in targets}
        for neighbour in neighbours.values():
            stack.callback(neighbour.stop)
        samples: dict[str, list[Sample]] = {t.name: [] for t in targets}
        for _ in range(args.rounds):
            for target in targets:  # interleaved: the machine's noise falls on all alike
                sample = measure(target, neighbours[target.name], args.logins, args.connections)
                samples[target.name].append(sample)
    rows: dict[str, Callable[[Sample], float]] = {
        "heartbeat p50, quiet (ms)": lambda s: median(s.quiet),
        "heartbeat p99, quiet (ms)": lambda s: p99(s.quiet),
        "heartbeat p50, during flood (ms)": lambda s: median(s.flooded),
        "heartbeat p99, during flood (ms)": lambda s: p99(s.flooded),
        "heartbeat max, during flood (ms)": lambda s: max(s.flooded),
        "flood duration (s)": lambda s: s.flood_s,
    }
    for label, of in rows.items():
        print_row(label, {name: median(of(s) for s in runs) for name, runs in samples.items()}, "", False)


class _stopping:
    """A started broker as a context manager that stops it."""

    def __init__(self, broker: RunningBroker) -> None:
        self.broker = broker

    def __enter__(self) -> RunningBroker:
        return self.broker

    def __exit__(self, *exc: object) -> None:
        self.broker.stop()


if __name__ == "__main__":
    main()
