"""The storage seam: every write to the data directory passes `check(site)` first, so a
test can make any chosen write fail as a full or broken disk would (ENOSPC, EIO) without
filling one. Nothing is armed in a running broker; an unarmed check is one truth test.

Sites name the kind of write: `log` (a segment's batches), `index` (offset and time
indexes), `txnindex`, `fsync`, `cleaned` (a compacted segment being written), and
`file:<name>` for the small files written whole (`file:producer-state.json`,
`file:topics.json`, `file:acls.json`, `file:credentials.json`, ...), `partition` (a new
partition's directory) and `remove` (a deleted partition's directory).

    fault = FAULTS.arm("log", after=2)   # the third segment write fails with ENOSPC
    ...
    FAULTS.clear()                       # space is back

A write can also be held: `FAULTS.hold("partition", after=100)` stops the thread making the
101st partition directory until the test calls `release()`, so a test sees what the broker
does while a long piece of storage work is half done (`reached` says it got there).
"""

from __future__ import annotations

import errno as errnos
import os
import threading
from dataclasses import dataclass, field


@dataclass
class Fault:
    """Fail writes at `site` (a prefix: "file:" matches every whole-file write; "" every
    write) with `errno`, after letting `after` of them through, `times` times (None: until
    cleared). `hits` counts the writes it failed."""

    site: str
    errno: int = errnos.ENOSPC
    after: int = 0
    times: int | None = None
    hits: int = 0

    def matches(self, site: str) -> bool:
        return site.startswith(self.site)


@dataclass
class Hold:
    """Hold the thread of the write at `site` after `after` others went through, until
    `release()` (or `timeout_s`: a test that fails never leaves a broker thread stuck)."""

    site: str
    after: int = 0
    timeout_s: float = 60.0
    reached: threading.Event = field(default_factory=threading.Event)
    released: threading.Event = field(default_factory=threading.Event)

    def release(self) -> None:
        self.released.set()


class WriteFaults:
    def __init__(self) -> None:
        self._armed: list[Fault] = []
        self._holds: list[Hold] = []
        self._lock = threading.Lock()  # the housekeeping thread writes too

    def hold(self, site: str, *, after: int = 0, timeout_s: float = 60.0) -> Hold:
        held = Hold(site, after, timeout_s)
        with self._lock:
            self._holds.append(held)
        return held

    def arm(
        self, site: str = "", *, errno: int = errnos.ENOSPC, after: int = 0, times: int | None = None
    ) -> Fault:
        fault = Fault(site, errno, after, times)
        with self._lock:
            self._armed.append(fault)
        return fault

    def clear(self) -> None:
        with self._lock:
            self._armed.clear()
            holds, self._holds = self._holds, []
        for held in holds:
            held.release()

    def check(self, site: str) -> None:
        """OSError if an armed fault claims this write; held here if a hold claims it."""
        if self._holds:
            self._wait_if_held(site)
        if not self._armed:
            return
        with self._lock:
            for fault in self._armed:
                if not fault.matches(site):
                    continue
                if fault.after > 0:
                    fault.after -= 1
                    continue
                if fault.times is not None and fault.hits >= fault.times:
                    continue
                fault.hits += 1
                raise OSError(fault.errno, f"{os.strerror(fault.errno)} (injected at {site})")

    def _wait_if_held(self, site: str) -> None:
        with self._lock:
            held = next((h for h in self._holds if site.startswith(h.site)), None)
            if held is None:
                return
            if held.after > 0:
                held.after -= 1
                return
            self._holds.remove(held)
        held.reached.set()
        held.released.wait(held.timeout_s)


FAULTS = WriteFaults()
check = FAULTS.check
