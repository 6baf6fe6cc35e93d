"""Waiting on Trio: a broadcast wake-up, and Fetch long polls waiting for appends."""

from __future__ import annotations

from collections.abc import Collection

import trio

from kafka_shim.storage.log import PartitionLog


class Wakeup:
    """A broadcast signal: everyone waiting is released when it fires."""

    def __init__(self) -> None:
        self._event = trio.Event()

    def fire(self) -> None:
        self._event.set()
        self._event = trio.Event()

    async def wait(self, timeout_s: float) -> None:
        with trio.move_on_after(max(timeout_s, 0.0)):
            await self._event.wait()


class AppendWaiters:
    """Fetch long polls, keyed by the partition logs they wait on: an append
    wakes only the Fetches reading that partition (an offset commit, which
    appends to __consumer_offsets, must not re-run every consumer's Fetch)."""

    def __init__(self) -> None:
        self._waiting: dict[PartitionLog, set[trio.Event]] = {}

    def notify(self, log: PartitionLog) -> None:
        for event in self._waiting.pop(log, ()):
            event.set()

    async def wait(self, logs: Collection[PartitionLog], timeout_s: float) -> None:
        event = trio.Event()
        for log in logs:
            self._waiting.setdefault(log, set()).add(event)
        try:
            with trio.move_on_after(max(timeout_s, 0.0)):
                await event.wait()
        finally:
            for log in logs:
                waiting = self._waiting.get(log)
                if waiting is not None:
                    waiting.discard(event)
                    if not waiting:
                        del self._waiting[log]
