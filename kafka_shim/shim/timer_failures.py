"""Timer work that raised: the broker goes on serving.

The broker's timers (group deadlines, transaction timeouts and id expiry, the in-memory
retention check, producer expiry) run on the event loop between requests. Work that raises
there would end the loop and the process, whatever raised: a record that cannot be encoded
(a timestamp past Kafka's range), a bug. Each kind of timer work runs through `TimerFailures`:
each distinct failure of a kind is logged once at ERROR (every one, with its traceback, at
DEBUG), and what failed is retried on its own schedule (each kind reschedules itself
whatever happened), so a timer that keeps failing costs one line and no CPU.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

log = logging.getLogger("kafka_shim.timers")

# The server's timer task, when a whole tick raised anyway: it waits this long before the
# next, doubling up to the second value while ticks keep failing, instead of spinning.
TICK_BACKOFF_S = (0.05, 5.0)
# Distinct failures logged at ERROR at most: past it, new ones are counted and logged at DEBUG.
_LOGGED_FAILURES = 100


class TimerFailures:
    """Per kind of timer work: how often it failed, and which failures were logged."""

    def __init__(self) -> None:
        self.failures: dict[str, int] = {}  # kind -> failures so far (tests, the console)
        self._logged: set[tuple[str, str]] = set()  # (kind, the error) already logged

    def run(self, kind: str, work: Callable[[], None]) -> bool:
        """`work()`, its exception logged (never raised); False if it raised."""
        try:
            work()
        except Exception as exc:
            self.failed(kind, exc)
            return False
        return True

    def failed(self, kind: str, exc: BaseException) -> None:
        """Count it; log it at ERROR the first time this kind fails this way (a deadline
        retried every few seconds must not flood the log), every time at DEBUG."""
        self.failures[kind] = self.failures.get(kind, 0) + 1
        seen = (kind, repr(exc))
        if seen not in self._logged and len(self._logged) < _LOGGED_FAILURES:
            self._logged.add(seen)
            log.error("timer work %s failed and is retried later; serving goes on: %r", kind, exc)
        log.debug("timer work %s failed (%d times)", kind, self.failures[kind], exc_info=exc)
