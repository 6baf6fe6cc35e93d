"""The groups of a coordinator that writes every change as a record (KIP-848 consumer groups,
KIP-932 share groups): `__consumer_offsets` holds the whole of them, so the one way to build
them is to replay it. Start-up does (`load`), and so does a write that failed (`reload`): the
groups its records named are rebuilt from what the log holds, which is what a restart would
find. Such failures are rare (a full or broken disk), so no call keeps an undo of its own.
"""

from __future__ import annotations

from collections.abc import Collection, Hashable, Iterable
from typing import Generic, TypeVar

from kafka_shim.protocol.offsets_records import OffsetsRecord
from kafka_shim.shim.coordinator.outcome import Outcome

G = TypeVar("G")


class ReplayedGroups(Generic[G]):
    """The groups by id; subclasses say how records become groups and when members' sessions end."""

    def __init__(self) -> None:
        self._groups: dict[str, G] = {}

    def _replay(self, log: Iterable[OffsetsRecord]) -> dict[str, G]:
        raise NotImplementedError

    def _session_timers(self, group: G, now: int) -> Iterable[tuple[Hashable, int]]:
        raise NotImplementedError

    def group(self, group_id: str) -> G | None:
        return self._groups.get(group_id)

    def groups(self) -> Iterable[G]:
        return self._groups.values()

    def load(self, log: Iterable[OffsetsRecord], now: int) -> Outcome[None]:
        """Rebuild the groups from the offsets log; every member's session starts now."""
        self._groups.update(self._replay(log))
        timers = tuple(timer for g in self._groups.values() for timer in self._session_timers(g, now))
        return Outcome(None, (), timers)

    def reload(self, group_ids: Collection[str], log: Iterable[OffsetsRecord]) -> None:
        """Put the named groups back as `log` (their partitions of the offsets log) has them:
        their records could not be written. The deadlines the failed call set were never set,
        and those it cancelled still stand, so members' sessions go on as before it."""
        replayed = self._replay(r for r in log if r.key.group in group_ids)
        for group_id in group_ids:
            group = replayed.get(group_id)
            if group is None:
                self._groups.pop(group_id, None)
            else:
                self._groups[group_id] = group
