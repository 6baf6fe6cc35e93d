"""The classic coordinator's memory, shared by its parts: the groups by id, the offsets parked
by open transactions, and whether the periodic retention check is scheduled (what Kafka's
group coordinator shard keeps in its timeline structures).

Kafka snapshots that memory at every write and reverts to the snapshot when the write fails;
here a call that may write records takes `undoable`: a copy of what it may change, put back
by the outcome's `undo` (outcome.py).
"""

from __future__ import annotations

import copy
from collections.abc import Iterable

from kafka_shim.shim.coordinator import group_timers
from kafka_shim.shim.coordinator.config import CoordinatorConfig
from kafka_shim.shim.coordinator.group import Group
from kafka_shim.shim.coordinator.outcome import Effects
from kafka_shim.shim.coordinator.transactional import TransactionalOffsets


class GroupRegistry:
    def __init__(self, config: CoordinatorConfig) -> None:
        self.config = config
        self.groups: dict[str, Group] = {}
        # Replaced as a whole by an undo: read it through the registry, never keep it.
        self.transactional = TransactionalOffsets()
        self.retention_scheduled = False

    def get(self, group_id: str) -> Group | None:
        return self.groups.get(group_id)

    def create(self, group_id: str, now: int, out: Effects) -> Group:
        group = Group(group_id, now)
        self.groups[group_id] = group
        self.schedule_retention(now, out)
        return group

    def schedule_retention(self, now: int, out: Effects) -> None:
        if not self.retention_scheduled:
            self.retention_scheduled = True
            out.schedule(group_timers.RETENTION, now + self.config.offsets_retention_check_interval_ms)

    def undoable(self, group_ids: Iterable[str]) -> Effects:
        """Effects of a call that may write records, whose `undo` puts back the groups it may
        change as they are now: a deep copy, taken only for calls that are rare next to
        heartbeats and commits (joins, syncs, leaves, deadlines)."""
        out = Effects()
        saved = {group_id: copy.deepcopy(self.groups.get(group_id)) for group_id in group_ids}
        transactional = copy.deepcopy(self.transactional)
        retention_scheduled = self.retention_scheduled

        def undo() -> None:
            for group_id, group in saved.items():
                if group is None:
                    self.groups.pop(group_id, None)
                else:
                    self.groups[group_id] = group
            self.transactional = transactional
            self.retention_scheduled = retention_scheduled

        out.undo = undo
        return out
