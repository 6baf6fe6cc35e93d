"""The broker's timers (shim.timers): an in-memory broker's housekeeping is among the deadlines
the timer task sleeps until, and a move of the broker's clock brings it due at once; on disk
the store's housekeeper does that work, so only the coordinators' deadlines are watched."""

from __future__ import annotations

from pathlib import Path

from tests.helpers import Harness


def test_in_memory_housekeeping_runs_on_the_brokers_clock_and_at_once_after_a_move() -> None:
    h = Harness()
    config, timers = h.broker.config, h.broker.timers
    soonest = min(
        config.log_retention_check_interval_ms,
        config.log_cleaner_backoff_ms,
        config.producer_id_expiration_check_interval_ms,
    )
    assert timers.watch_deadlines() == h.clock.now + soonest
    assert not timers.deadline_sooner_than(h.clock.now + soonest)
    h.clock.now += 1000
    timers.clock_moved()
    assert timers.watch_deadlines() == h.clock.now
    timers.tick(h.clock.now)  # retention, cleaner and producer expiry run, then wait again
    assert timers.watch_deadlines() == h.clock.now + soonest


def test_on_disk_a_clock_move_leaves_the_watched_deadlines_as_they_were(tmp_path: Path) -> None:
    h = Harness(data_dir=tmp_path)
    timers = h.broker.timers
    watched = timers.watch_deadlines()
    assert watched is not None and watched > h.clock.now  # the groups' offsets retention check
    timers.clock_moved()
    assert timers.watch_deadlines() == watched
