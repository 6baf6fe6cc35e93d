"""The main loop every Python driver shares: read the command, dispatch, report errors.

A driver module defines one object with a method per op (see `DriverOps`); sync or async
(aiokafka) methods both work. `member` receives a `threading.Event` that is set when
stdin yields ``close`` or reaches EOF (the test process went away). ``swarm`` is built
here from `member`: one thread (sync clients) or task (async clients) per member.
"""

from __future__ import annotations

import asyncio
import faulthandler
import inspect
import signal
import sys
import threading
import traceback
from collections.abc import Iterable
from dataclasses import replace
from typing import Any, Protocol

from compat.schema import MEMBER_LABEL, Command, emit


class DriverOps(Protocol):
    def create_topic(self, command: Command) -> Any: ...
    def produce(self, command: Command) -> Any: ...
    def consume(self, command: Command) -> Any: ...
    def offsets(self, command: Command) -> Any: ...
    def member(self, command: Command, stop: threading.Event) -> Any: ...
    def admin(self, command: Command) -> Any: ...


def close_requested() -> threading.Event:
    """An event set once stdin says ``close`` or closes; read in a daemon thread."""
    stop = threading.Event()

    def watch() -> None:
        for line in sys.stdin:
            if line.strip() == "close":
                break
        stop.set()

    threading.Thread(target=watch, name="stdin-close", daemon=True).start()
    return stop


class AssignmentTracker:
    """Emits ``assignment`` after every completed rebalance and whenever partitions are revoked.

    Each assign callback is reported even if the owned set is unchanged, so a test can tell
    "no rebalance happened" (no new observation) from "a rebalance gave the same partitions".
    """

    def __init__(self) -> None:
        self.owned: set[int] = set()
        # Taken now, in the member's thread or task: clients call back from threads of their
        # own (kafka-python's heartbeat thread, kcat's stderr reader) that lack the label.
        self.label = MEMBER_LABEL.get() or {}
        # Revoking nothing before the first join (eager clients do) is no change to report.
        self._emitted: list[int] = []

    def replace(self, partitions: Iterable[int], generation: int | None = None) -> None:
        self.owned = set(partitions)
        self.report(generation, force=True)

    def add(self, partitions: Iterable[int], generation: int | None = None) -> None:
        self.owned |= set(partitions)
        self.report(generation, force=True)

    def remove(self, partitions: Iterable[int], generation: int | None = None) -> None:
        self.owned -= set(partitions)
        self.report(generation)

    def report(self, generation: int | None, force: bool = False) -> None:
        current = sorted(self.owned)
        if force or current != self._emitted:
            self._emitted = current
            emit("assignment", partitions=current, generation=generation, **self.label)


def security_options(command: Command) -> dict[str, Any]:
    """`command.security` (librdkafka's names) as kafka-python's and aiokafka's keyword arguments;
    aiokafka takes the TLS files as an SSL context, built here the way its helper builds one."""
    security = command.security
    if not security:
        return {}
    options: dict[str, Any] = {"security_protocol": security["security.protocol"].upper()}
    if "sasl.mechanism" in security:
        options |= {
            "sasl_mechanism": security["sasl.mechanism"],
            "sasl_plain_username": security["sasl.username"],
            "sasl_plain_password": security["sasl.password"],
        }
    if "ssl.ca.location" in security:
        import ssl

        context = ssl.create_default_context(cafile=security["ssl.ca.location"])
        if "ssl.certificate.location" in security:
            context.load_cert_chain(security["ssl.certificate.location"], security["ssl.key.location"])
        options["ssl_context"] = context
    return options


def group_consumer_options(command: Command, assignors: dict[str, Any], client: str) -> dict[str, Any]:
    """The group consumer keyword arguments kafka-python and aiokafka share (same names)."""
    if command.assignor not in assignors:
        raise ValueError(f"{client} driver supports assignors {sorted(assignors)}")
    return {
        **security_options(command),
        "bootstrap_servers": command.bootstrap,
        "client_id": command.client_id,
        "group_id": command.group,
        "group_instance_id": command.group_instance_id,
        "auto_offset_reset": "earliest",
        "enable_auto_commit": False,
        "session_timeout_ms": command.session_timeout_ms,
        "partition_assignment_strategy": (assignors[command.assignor],),
        "isolation_level": command.isolation,
    }


def swarm_members(command: Command) -> list[tuple[dict[str, str], Command]]:
    """Each swarm member's label and its own `member` command."""
    members = []
    for i in range(command.groups):
        group = f"{command.group}-{i}"
        for j in range(command.members):
            label = {"member": f"{i}/{j}", "group": group}
            members.append((label, replace(command, op="member", group=group, client_id=f"{group}-{j}")))
    return members


def run_swarm(ops: DriverOps, command: Command, stop: threading.Event) -> Any:
    members = swarm_members(command)
    if inspect.iscoroutinefunction(ops.member):

        async def member_task(label: dict[str, str], member_command: Command) -> None:
            MEMBER_LABEL.set(label)  # tasks copy the context: this stays in this member's task
            await ops.member(member_command, stop)

        async def all_members() -> None:
            await asyncio.gather(*(member_task(label, cmd) for label, cmd in members))

        return all_members()

    failures: list[BaseException] = []

    def member_thread(label: dict[str, str], member_command: Command) -> None:
        MEMBER_LABEL.set(label)  # a new thread starts with an empty context
        try:
            ops.member(member_command, stop)
        except Exception as exc:
            failures.append(exc)
            stop.set()  # one failed member fails the swarm: stop the others too

    threads = [
        threading.Thread(target=member_thread, args=member, name=member[0]["member"], daemon=True)
        for member in members
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if failures:
        raise failures[0]
    return None


def run(ops: DriverOps, argv: list[str] | None = None) -> None:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        sys.stderr.write("usage: python -m compat.clients.<client> '<command json>'\n")
        raise SystemExit(2)
    command = Command.from_json(args[0])
    # `kill -USR1 <driver>` prints every thread's stack to stderr: how a stuck client is diagnosed.
    faulthandler.register(signal.SIGUSR1, all_threads=True)
    emit("ready", op=command.op)
    try:
        if command.op == "member":
            result = ops.member(command, close_requested())
        elif command.op == "swarm":
            result = run_swarm(ops, command, close_requested())
        else:
            result = getattr(ops, command.op)(command)
        if inspect.isawaitable(result):
            asyncio.run(_awaited(result))
    except Exception as exc:  # report any client failure as an observation, then fail
        traceback.print_exc()
        emit("error", message=f"{type(exc).__name__}: {exc}")
        raise SystemExit(1) from exc


async def _awaited(result: Any) -> None:
    await result
