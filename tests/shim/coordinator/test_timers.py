"""The coordinators' one timer skeleton: deadlines by key, fired earliest first; stale entries
left by rescheduling and cancelling do not pile up."""

from __future__ import annotations

import math
import random
from collections.abc import Hashable

from kafka_shim.shim.coordinator.timers import STALE_SLACK, Deadlines


def test_fire_due_fires_in_deadline_order_and_only_what_is_due() -> None:
    deadlines = Deadlines()
    for key, at in (("late", 30), ("first", 10), ("second", 20), ("future", 99)):
        deadlines.schedule(key, at)
    fired: list[tuple[Hashable, int]] = []
    deadlines.fire_due(30, lambda key, now: fired.append((key, now)))
    assert fired == [("first", 30), ("second", 30), ("late", 30)]
    assert deadlines.earliest() == 99


def test_a_rescheduled_or_cancelled_key_fires_at_its_new_time_or_never() -> None:
    deadlines = Deadlines()
    deadlines.schedule("moved", 10)
    deadlines.schedule("moved", 50)
    deadlines.schedule("cancelled", 5)
    deadlines.cancel("cancelled")
    fired: list[Hashable] = []
    deadlines.fire_due(40, lambda key, now: fired.append(key))
    assert fired == []
    deadlines.fire_due(50, lambda key, now: fired.append(key))
    assert fired == ["moved"]


def test_firing_may_set_deadlines_that_are_already_due() -> None:
    deadlines = Deadlines()
    deadlines.schedule("retention", 10)
    fired: list[Hashable] = []

    def fire(key: Hashable, now: int) -> None:
        fired.append(key)
        if key == "retention":
            deadlines.schedule("join", now)  # a zero delay
            deadlines.schedule("retention", now + 100)

    deadlines.fire_due(10, fire)
    assert fired == ["retention", "join"]
    assert deadlines.earliest() == 110


def test_rescheduling_far_deadlines_keeps_the_heap_bounded() -> None:
    deadlines = Deadlines()
    for round_ in range(50_000):  # joins whose 5-minute timeout is rescheduled, then cancelled
        deadlines.schedule(("member", round_ % 10), 300_000 + round_)
        if round_ % 3 == 0:
            deadlines.cancel(("member", round_ % 10))
    assert len(deadlines._heap) <= 2 * 10 + STALE_SLACK + 1


def test_due_keys_come_out_in_deadline_order_across_prunes() -> None:
    rng = random.Random(7)
    deadlines = Deadlines()
    expected: dict[Hashable, int] = {}
    for _ in range(20_000):
        key = rng.randrange(300)
        if rng.random() < 0.2:
            deadlines.cancel(key)
            expected.pop(key, None)
        else:
            at = rng.randrange(1_000_000)
            deadlines.schedule(key, at)
            expected[key] = at
    assert deadlines.earliest() == min(expected.values())
    popped: list[Hashable] = []
    while (due := deadlines.pop_due(1_000_000)) is not None:
        popped.append(due)
    assert [expected[k] for k in popped] == sorted(expected.values())
    assert set(popped) == set(expected)


def test_scheduled_low_tells_the_watcher_of_a_deadline_set_since_it_looked() -> None:
    deadlines = Deadlines()
    deadlines.schedule("session", 100)
    assert deadlines.watch() == 100
    assert deadlines.scheduled_low == math.inf
    deadlines.schedule("session", 130)  # a heartbeat: later than what the watcher sleeps until
    assert not deadlines.scheduled_low < 100
    deadlines.schedule("join", 60)
    assert deadlines.scheduled_low == 60
    assert deadlines.watch() == 60
    assert deadlines.scheduled_low == math.inf


def test_deadlines_moved_later_fire_as_if_set_anew_ties_in_the_order_set() -> None:
    # Heartbeats move sessions later without a heap entry each (the old one stands in until
    # it surfaces): what comes out is still ordered by time, then by when each was last set.
    rng = random.Random(11)
    deadlines = Deadlines()
    last_set: dict[Hashable, tuple[int, int]] = {}
    now = 0
    for order in range(30_000):
        key = rng.randrange(50)
        roll = rng.random()
        if roll < 0.05:
            deadlines.cancel(key)
            last_set.pop(key, None)
        elif roll < 0.1:
            now += rng.randrange(20)
            while (due := deadlines.pop_due(now)) is not None:
                expected = min(last_set.items(), key=lambda item: item[1])
                assert (due, last_set[due]) == expected and expected[1][0] <= now
                del last_set[due]
            assert deadlines.earliest() == min((at for at, _ in last_set.values()), default=None)
        else:
            at = now + rng.randrange(1, 60 if roll < 0.8 else 10)  # mostly later, some earlier
            deadlines.schedule(key, at)
            last_set[key] = (at, order)
    assert len(deadlines._heap) <= 2 * 50 + STALE_SLACK + 1
