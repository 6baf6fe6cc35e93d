"""The storage seam: every write to the data directory passes `check(site)` first, so a
test can make any chosen write fail as a full or broken disk would (ENOSPC, EIO) without
filling one. Nothing is armed in a running broker; an unarmed check is one truth test.

Sites name the kind of write: `log` (a segment's batches), `index` (offset and time
indexes), `txnindex`, `fsync`, `cleaned` (a compacted segment being written), and
`file:<name>` for the small files written whole (`file:producer-state.json`,
`file:topics.json`, `file:acls.json`, `file:credentials.json`, ...).

    fault = FAULTS.arm("log", after=2)   # the third segment write fails with ENOSPC
    ...
    FAULTS.clear()                       # space is back
"""

from __future__ import annotations

import errno as errnos
import os
import threading
from dataclasses import dataclass


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


class WriteFaults:
    def __init__(self) -> None:
        self._armed: list[Fault] = []
        self._lock = threading.Lock()  # the housekeeping thread writes too

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

    def check(self, site: str) -> None:
        """OSError if an armed fault claims this write."""
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


FAULTS = WriteFaults()
check = FAULTS.check
