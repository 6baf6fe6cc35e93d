"""The broker's clock: the one `now` (epoch milliseconds) every coordinator, retention and
expiry is given, which a test can advance or freeze while clients keep their own clocks.

What runs on it: group session and rebalance (join) timeouts, the initial rebalance delay,
offset and group retention, transaction timeouts and transactional id expiry, fetch session
eviction, LogAppendTime, record retention (retention.ms) and delete.retention.ms.

What does not: waits the client is timing itself, which stay on wall time, so advancing the
clock never answers them early and freezing it never holds them forever: a Fetch long poll
(max_wait_ms), a quota throttle, a fault rule's delay_ms, idle-connection expiry. A request
held by the coordinator waits on broker time: a JoinGroup waiting for the other members
completes as soon as the clock is advanced past its rebalance timeout (the members that did
not rejoin are removed), and a member whose session the advance passes is expired at once.
"""

from __future__ import annotations

from collections.abc import Callable

from kafka_shim.storage.durability import wall_clock_ms

# The latest time the clock may show: the end of year 9999 (what date tools, Python's datetime
# among them, can still write). Kafka's timestamps are 64-bit milliseconds; stopping here
# leaves every deadline the broker adds to now (days of retention, a transaction's timeout)
# far inside that range, so no timestamp, deadline or record it writes can overflow one.
MAX_NOW_MS = 253_402_300_799_999


class BrokerClock:
    """Wall time, moved on by `advance` and stopped by `freeze`. Owned by the broker's event
    loop: front ends on other threads go through it (BrokerThread.call)."""

    def __init__(self, source: Callable[[], int] = wall_clock_ms) -> None:
        self._source = source
        self._offset_ms = 0
        self._frozen_at: int | None = None
        # The server sets this to wake its timer task: deadlines the clock passed fire at once.
        self.on_change: Callable[[], None] = lambda: None

    def now(self) -> int:
        frozen = self._frozen_at
        return self._source() + self._offset_ms if frozen is None else frozen

    @property
    def frozen(self) -> bool:
        return self._frozen_at is not None

    @property
    def offset_ms(self) -> int:
        """How far ahead of its source (wall time) the clock runs. Unfrozen, the offset itself:
        `now() - source()` would read wall time twice and be off by one when a millisecond
        ticks between the reads."""
        frozen = self._frozen_at
        return self._offset_ms if frozen is None else frozen - self._source()

    def advance(self, seconds: float) -> int:
        """Move the clock forward (never back, never past MAX_NOW_MS, never by NaN: ValueError);
        returns the new now."""
        if not seconds >= 0:  # also NaN
            raise ValueError(f"the broker's clock only moves forward, not by {seconds} s")
        latest_s = (MAX_NOW_MS - self.now()) / 1000
        if seconds > latest_s:
            raise ValueError(
                f"advancing by {seconds} s would leave Kafka's timestamp range: at most {latest_s:.0f} s"
                " (the clock stops at the end of year 9999)"
            )
        step = round(seconds * 1000)
        if self._frozen_at is None:
            self._offset_ms += step
        else:
            self._frozen_at += step
        self.on_change()
        return self.now()

    def freeze(self) -> int:
        """Stop the clock at its current time (it moves only by `advance` until `resume`)."""
        if self._frozen_at is None:
            self._frozen_at = self.now()
        return self._frozen_at

    def resume(self) -> int:
        """Run again from where it stands (wall time plus what was advanced)."""
        if self._frozen_at is not None:
            self._offset_ms = self._frozen_at - self._source()
            self._frozen_at = None
            self.on_change()
        return self.now()

    def to_json(self) -> dict[str, object]:
        return {"now_ms": self.now(), "frozen": self.frozen, "offset_ms": self.offset_ms}
