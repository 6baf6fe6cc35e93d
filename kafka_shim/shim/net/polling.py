"""Busy polling that steps aside when the core is wanted (shim.net.framing.FrameReader).

Polling a quick peer's socket for a few hundred µs instead of parking in epoll saves the
wake-up of an idle CPU (on this 2-core VM an OffsetCommit's round trip 200 µs after a 1 ms idle
gap, 85 µs after 0.1 ms). That pays only while the polling thread has its core to itself: where
more threads want to run than there are cores (several broker processes, the clients, other
work), a spinning process takes the core the peer needs to send its next request, and the
polls lost those runs (docs/performance.md, "Many connections").

A poll that was preempted shows it: the wall time it took exceeds the CPU time its thread got
meanwhile (the thread never sleeps while it polls: Trio's scheduler passes with a zero epoll
timeout while a task is runnable, and the tasks it runs in between count as CPU). Unless one
of those tasks blocks: under `--fsync always` a Produce on another connection fsyncs in this
thread (DiskLog.append), milliseconds of wall time without CPU, and a poll spanning it reads as
preempted; polling then stops for OFF_S, which costs wake-ups, not answers. When that gap
passes PREEMPTED_S, the thread stops polling for OFF_S, then tries again: a thread alone on
its core keeps polling; one whose core is shared parks at once, as it would without polling.

Under steady load a poll is rarely caught preempted (the peer, woken on the broker's core, has
often sent before the broker reads again, so there is no poll), yet the spinning costs the
process its fair share of the core. So the thread's run-queue wait (Linux's
/proc/thread-self/schedstat: time runnable but not running) is also read as a poll begins, at
most every LOOK_EVERY_S: a thread that waited for a core more than WAITED_SHARE of the time
since the last look stops polling for OFF_S too.
"""

from __future__ import annotations

import threading
import time

# A poll that lost more than this to other threads was preempted: the core is shared. A poll
# alone on its core loses 0-1 µs (timer ticks, interrupts), a preempted one hundreds of µs to
# ms (this VM at load 4: 10 % of 300 µs polls lost 186 µs or more, half lost nothing). Losses
# of tens of µs are the GIL handed to the process's own threads (the log flusher after an
# fsync: 1 % of polls beside an fsync every 20 ms lost 41-48 µs, 0.3 % over 100 µs) and the
# synchronous client itself, woken onto the broker's core by the answer: at 100 µs a quiet
# machine's one-connection committer stepped polling aside again and again, 12,300-12,700 ->
# 10,000-10,500 commits/s (bench.connections, 9 rounds, 15:44 UTC, load 1), where 1 ms kept
# polling and with a core taken by other work stepped aside as 100 µs did (within 3 %).
PREEMPTED_S = 1e-3
# How long a process that was preempted while polling parks at once instead; then one poll
# looks again. Other work comes and goes by seconds; a quarter second follows it without the
# look costing much (a look preempted again spins at most one window).
OFF_S = 0.25
# A thread alone on its core waits for it 0-2 % of the time (this VM: a Trio loop waking every
# 100 µs, 1-2 %); one spinning beside other work at load 2.6 on 2 cores waited 14-44 %.
WAITED_SHARE = 0.1
LOOK_EVERY_S = 0.1  # a look costs 11-16 µs (open, read, close)
SCHEDSTAT = "/proc/thread-self/schedstat"  # run ns, run-queue wait ns, timeslices


class Polling:
    """Whether a Trio loop's thread busy-polls now; one per thread (for_this_thread), since the
    thread's core is shared by all of its connections. Not one per process: the pytest plugin
    runs brokers on threads of one process, and one thread's run-queue wait compared with
    another's, or one thread's preempted poll, says nothing of the other's core."""

    def __init__(self) -> None:
        self.off_until = 0.0  # time.monotonic() before which nobody polls
        self._next_look = 0.0
        self._looked_at = self._waited_s = -1.0  # the last look: when, and the wait it read

    def may_poll(self, now: float) -> bool:
        """Whether a poll may begin at `now` (time.monotonic())."""
        if now >= self._next_look:
            self._look(now)
        return now >= self.off_until

    def _look(self, now: float) -> None:
        try:
            with open(SCHEDSTAT, "rb") as stat:
                waited_s = int(stat.read().split()[1]) / 1e9
        except (OSError, IndexError, ValueError):  # not Linux, or no schedstats: polls alone judge
            self._next_look = float("inf")
            return
        self.waited(now, waited_s)

    def waited(self, now: float, waited_s: float) -> None:
        """The thread's run-queue wait read at `now`: stop polling for a while if it grew by
        more than WAITED_SHARE of the time since the last look."""
        if self._looked_at >= 0 and waited_s - self._waited_s > WAITED_SHARE * (now - self._looked_at):
            self.off_until = now + OFF_S
        self._looked_at, self._waited_s = now, waited_s
        self._next_look = now + LOOK_EVERY_S

    def polled(self, started: float, cpu_started: float, now: float) -> None:
        """A poll that began at `started` (time.monotonic()) and `cpu_started`
        (time.thread_time()) ended at `now`: stop polling for a while if it was preempted."""
        if (now - started) - (time.thread_time() - cpu_started) > PREEMPTED_S:
            self.off_until = now + OFF_S


_THREADS = threading.local()


def for_this_thread() -> Polling:
    """The calling thread's Polling (a FrameReader takes its loop's as it is made)."""
    polling: Polling | None = getattr(_THREADS, "polling", None)
    if polling is None:
        polling = _THREADS.polling = Polling()
    return polling
