"""Deadlines: stale entries left by rescheduling and cancelling do not pile up."""

from __future__ import annotations

import random
from collections.abc import Hashable

from kafka_shim.shim.coordinator.timers import STALE_SLACK, Deadlines


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
