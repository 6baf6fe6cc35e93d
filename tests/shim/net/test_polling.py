"""Busy polling stops for a while after a poll that was preempted (shim.net.polling)."""

from __future__ import annotations

import time

from kafka_shim.shim.net.polling import OFF_S, Polling


def test_a_poll_that_kept_its_core_keeps_polling() -> None:
    polling = Polling()
    now = time.monotonic()
    polling.polled(now, time.thread_time(), now)  # no wall time passed without the CPU
    assert polling.off_until == 0.0


def test_a_preempted_poll_stops_polling_for_a_while() -> None:
    polling = Polling()
    now = time.monotonic()
    # A second of wall time the thread did not get: another thread had its core.
    polling.polled(now - 1.0, time.thread_time(), now)
    assert polling.off_until == now + OFF_S
