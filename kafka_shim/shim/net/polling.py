"""Busy polling that steps aside when the core is wanted (shim.net.framing.FrameReader).

Polling a quick peer's socket for a few hundred µs instead of parking in epoll saves the
wake-up of an idle CPU (on this 2-core VM an OffsetCommit's round trip 200 µs after a 1 ms idle
gap, 85 µs after 0.1 ms). That pays only while the polling thread has its core to itself: where
more threads want to run than there are cores (several broker processes, the clients, other
work), a spinning process takes the core the peer needs to send its next request, and the
polls lost those runs (docs/performance.md, "Many connections").

A poll that was preempted shows it: the wall time it took exceeds the CPU time its thread got
meanwhile (the thread never sleeps while it polls: Trio's scheduler passes with a zero epoll
timeout while a task is runnable, and the tasks it runs in between count as CPU). When that gap
passes PREEMPTED_S, the process stops polling for OFF_S, then tries again: a process alone on
its core keeps polling; one whose core is shared parks at once, as it would without polling.
"""

from __future__ import annotations

import time

# A poll that lost more than this to other threads was preempted: the core is shared. A poll
# alone on its core loses 0-1 µs (timer ticks, interrupts), a preempted one hundreds of µs to
# ms (this VM at load 4: 10 % of 300 µs polls lost 186 µs or more, half lost nothing). Losses
# under 100 µs are mostly the GIL handed to the process's own threads (the log flusher after
# an fsync: 1 % of polls beside an fsync every 20 ms lost 41-48 µs, 0.3 % over 100 µs).
PREEMPTED_S = 100e-6
# How long a process that was preempted while polling parks at once instead; then one poll
# looks again. Other work comes and goes by seconds; a quarter second follows it without the
# look costing much (a look preempted again spins at most one window).
OFF_S = 0.25


class Polling:
    """Whether this process busy-polls now; one for the process, since its core is shared by
    all of its connections."""

    def __init__(self) -> None:
        self.off_until = 0.0  # time.monotonic() before which nobody polls

    def polled(self, started: float, cpu_started: float, now: float) -> None:
        """A poll that began at `started` (time.monotonic()) and `cpu_started`
        (time.thread_time()) ended at `now`: stop polling for a while if it was preempted."""
        if (now - started) - (time.thread_time() - cpu_started) > PREEMPTED_S:
            self.off_until = now + OFF_S


POLLING = Polling()
