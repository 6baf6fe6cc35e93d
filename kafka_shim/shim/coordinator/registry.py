"""The classic coordinator's memory, shared by its parts: the groups by id, the offsets parked
by open transactions, and whether the periodic retention check is scheduled (what Kafka's
group coordinator shard keeps in its timeline structures).

Kafka snapshots that memory at every write and reverts to the snapshot when the write fails;
here a call that may write records takes `undoable`: a copy of what it may change, put back
by the outcome's `undo` (outcome.py). Unlike a KIP-848 group, a classic group cannot be
replayed from its records instead: the log holds it only at a completed rebalance or Empty,
while memory also holds the rebalance in progress (who rejoined, who waits for an answer).
"""

from __future__ import annotations

from collections.abc import Iterable

from kafka_shim.shim.coordinator import group_timers
from kafka_shim.shim.coordinator.config import CoordinatorConfig
from kafka_shim.shim.coordinator.group import Group, SavedGroup
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

    def undoable(self, group_ids: Iterable[str], *, with_offsets: bool = False) -> Effects:
        """Effects of a call that may write records, whose `undo` puts back the groups it may
        change as they are now (group.SavedGroup: their fields and containers, and a member's
        fields once the call first writes them; put back in place). `with_offsets`: the call
        may also change committed offsets or those parked by open transactions (deleting
        offsets or groups, a transactional commit)."""
        out = Effects()
        groups = self.groups
        saved = [
            (group_id, None if (group := groups.get(group_id)) is None else SavedGroup(group, with_offsets))
            for group_id in group_ids
        ]
        transactional = self.transactional.copy() if with_offsets else None
        retention_scheduled = self.retention_scheduled

        def undo() -> None:
            for group_id, kept in saved:
                if kept is None:
                    groups.pop(group_id, None)
                else:
                    groups[group_id] = kept.restore()
            if transactional is not None:
                self.transactional = transactional
            self.retention_scheduled = retention_scheduled

        out.undo = undo
        return out
