"""Deadlines by key: the earliest one, and the due ones fired in order. The one timer
skeleton of the coordinators: the broker keeps both group coordinators' deadlines in one,
the transaction coordinator its own.

A heap with lazy deletion: rescheduling or cancelling a key leaves its old
entry in the heap, recognised as stale when it surfaces. Stale entries of far
deadlines (a new member's 5-minute join timeout) would otherwise stay until then,
one per reschedule: the heap is rebuilt from the live ones when stale entries
outnumber them by STALE_SLACK (amortised O(1) per schedule).

A deadline moved later (a heartbeat restarting its member's session) pushes nothing: its
entry in the heap stays, earlier than it, as the key's placeholder, and is replaced by the
real deadline when it surfaces. Deadlines still come out in (time, order set) order: the
placeholder surfaces no later than the deadline it stands for would.

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
        # Keys whose deadline moved later and is not in the heap yet: an earlier entry of
        # theirs there stands in for it.
        self._deferred: set[Hashable] = set()
        self.scheduled_low: float = math.inf

    def schedule(self, key: Hashable, at: int) -> None:
        if at < self.scheduled_low:
            self.scheduled_low = at
        entry = (at, next(self._sequence))
        current = self._current.get(key)
        self._current[key] = entry
        if current is not None and at >= current[0]:
            self._deferred.add(key)  # its entry for `current` (or an earlier one) stands in
            return
        self._deferred.discard(key)
        heapq.heappush(self._heap, (*entry, key))
        self._prune()

    def cancel(self, key: Hashable) -> None:
        self._current.pop(key, None)
        self._deferred.discard(key)

    def _prune(self) -> None:
        if len(self._heap) > 2 * len(self._current) + STALE_SLACK:
            self._heap = [(at, sequence, key) for key, (at, sequence) in self._current.items()]
            heapq.heapify(self._heap)
            self._deferred.clear()

    def __contains__(self, key: Hashable) -> bool:
        return key in self._current

    def at(self, key: Hashable) -> int | None:
        entry = self._current.get(key)
        return None if entry is None else entry[0]

    def _drop_stale(self) -> None:
        """Until the heap's first entry is a live deadline: stale entries go, a moved
        deadline's placeholder is replaced by the deadline."""
        heap = self._heap
        while heap:
            at, sequence, key = heap[0]
            current = self._current.get(key)
            if current == (at, sequence):
                return
            if current is not None and key in self._deferred and current[0] >= at:
                self._deferred.discard(key)
                heapq.heapreplace(heap, (*current, key))
            else:
                heapq.heappop(heap)

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
