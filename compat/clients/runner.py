"""The main loop every Python driver shares: read the command, dispatch, report errors.

A driver module defines one object with a method per op (see `DriverOps`); sync or async
(aiokafka) methods both work. `member` receives a `threading.Event` that is set when
stdin yields ``close`` or reaches EOF (the test process went away).
"""

from __future__ import annotations

import asyncio
import inspect
import sys
import threading
import traceback
from collections.abc import Iterable
from typing import Any, Protocol

from compat.schema import Command, emit


class DriverOps(Protocol):
    def create_topic(self, command: Command) -> Any: ...
    def produce(self, command: Command) -> Any: ...
    def consume(self, command: Command) -> Any: ...
    def offsets(self, command: Command) -> Any: ...
    def member(self, command: Command, stop: threading.Event) -> Any: ...


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
            emit("assignment", partitions=current, generation=generation)


def run(ops: DriverOps, argv: list[str] | None = None) -> None:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        sys.stderr.write("usage: python -m compat.clients.<client> '<command json>'\n")
        raise SystemExit(2)
    command = Command.from_json(args[0])
    emit("ready", op=command.op)
    try:
        if command.op == "member":
            result = ops.member(command, close_requested())
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
