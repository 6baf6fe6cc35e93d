"""shim.testbroker.clock: the broker's clock advances and freezes; advancing fires the group
deadlines it passes."""

from __future__ import annotations

import pytest

from kafka_shim.shim.testbroker.clock import MAX_NOW_MS, BrokerClock


def test_advance_freeze_and_resume() -> None:
    wall = [1_000_000]
    changes: list[int] = []
    clock = BrokerClock(lambda: wall[0])
    clock.on_change = lambda: changes.append(clock.now())
    assert clock.advance(1.5) == 1_001_500
    wall[0] += 100
    assert clock.now() == 1_001_600  # runs with wall time, 1.5 s ahead
    frozen = clock.freeze()
    wall[0] += 5_000
    assert clock.now() == frozen == 1_001_600
    assert clock.advance(2) == 1_003_600  # a frozen clock still moves by advance
    assert clock.resume() == 1_003_600
    wall[0] += 10
    assert clock.now() == 1_003_610 and clock.to_json()["offset_ms"] == 1_003_610 - wall[0]
    assert changes == [1_001_500, 1_003_600, 1_003_600]
    with pytest.raises(ValueError, match="forward"):
        clock.advance(-1)


@pytest.mark.parametrize(
    "seconds", [float("nan"), float("inf"), 1e16, (MAX_NOW_MS - 1_000_000) / 1000 + 0.002]
)
def test_advances_leaving_kafkas_timestamp_range_are_refused(seconds: float) -> None:
    clock = BrokerClock(lambda: 1_000_000)
    with pytest.raises(ValueError):
        clock.advance(seconds)
    assert clock.now() == 1_000_000  # unchanged
    assert clock.advance((MAX_NOW_MS - 1_000_000) / 1000) == MAX_NOW_MS  # up to the last millisecond


def test_the_offset_of_a_running_clock_does_not_move_when_wall_time_ticks_between_reads() -> None:
    wall = iter(range(1_000_000, 2_000_000))  # every read of wall time is a millisecond later
    clock = BrokerClock(lambda: next(wall))
    clock.advance(2)
    assert clock.offset_ms == 2_000 and clock.offset_ms == 2_000
