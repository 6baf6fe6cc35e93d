"""The coordinators' one timer skeleton: deadlines by key, fired earliest first."""

from __future__ import annotations

from collections.abc import Hashable

from kafka_shim.shim.coordinator.timers import Deadlines


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
