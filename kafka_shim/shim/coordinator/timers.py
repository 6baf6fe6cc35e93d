"""Deadlines by key: the earliest one, and the due ones fired in order. The one timer
skeleton of the coordinators: the broker keeps both group coordinators' deadlines in one,
the transaction coordinator its own.

A heap with lazy deletion: rescheduling or cancelling a key leaves its old
entry in the heap, recognised as stale when it surfaces. Stale entries of far
deadlines (a new member's 5-minute join timeout) would otherwise stay until then,
one per reschedule: the heap is rebuilt from the live ones when stale entries
outnumber them by STALE_SLACK (amortised O(1) per schedule).

A deadline only moves earlier by being scheduled, so whoever sleeps until the earliest
one (the server's timer task) reads it with `watch()` and needs waking only when
`scheduled_low`, the earliest deadline scheduled since, falls below it: a comparison per
request instead of a look at the heap.
"""

from __future__ import annotations

import heapq
import itertools
import math
from collections.abc import Callable, Hashable

STALE_SLACK = 1024


class Deadlines:
    def __init__(self) -> None:
        self._heap: list[tuple[int, int, Hashable]] = []
        self._current: dict[Hashable, tuple[int, int]] = {}
        self._sequence = itertools.count()
        self.scheduled_low: float = math.inf

    def schedule(self, key: Hashable, at: int) -> None:
        if at < self.scheduled_low:
            self.scheduled_low = at
        entry = (at, next(self._sequence))
        self._current[key] = entry
        heapq.heappush(self._heap, (*entry, key))
        self._prune()

    def cancel(self, key: Hashable) -> None:
        self._current.pop(key, None)

    def _prune(self) -> None:
        if len(self._heap) > 2 * len(self._current) + STALE_SLACK:
            self._heap = [(at, sequence, key) for key, (at, sequence) in self._current.items()]
            heapq.heapify(self._heap)

    def __contains__(self, key: Hashable) -> bool:
        return key in self._current

    def at(self, key: Hashable) -> int | None:
        entry = self._current.get(key)
        return None if entry is None else entry[0]

    def _drop_stale(self) -> None:
        while self._heap:
            at, sequence, key = self._heap[0]
            if self._current.get(key) == (at, sequence):
                return
            heapq.heappop(self._heap)

    def earliest(self) -> int | None:
        self._drop_stale()
        return self._heap[0][0] if self._heap else None

    def watch(self) -> int | None:
        """The earliest deadline; `scheduled_low` tells from now on of any set since."""
        self.scheduled_low = math.inf
        return self.earliest()

    def pop_due(self, now: int) -> Hashable | None:
        """The key of the earliest deadline at or before `now`, removed; None if none is due."""
        self._drop_stale()
        if not self._heap or self._heap[0][0] > now:
            return None
        _, _, key = heapq.heappop(self._heap)
        del self._current[key]
        return key

    def fire_due(self, now: int, fire: Callable[[Hashable, int], None]) -> None:
        """Fire every deadline due by `now`, earliest first (firing may schedule more)."""
        while (key := self.pop_due(now)) is not None:
            fire(key, now)
