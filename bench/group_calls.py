"""CPU per group call at the coordinators, in process (pure: no sockets, no log), for A/B
comparisons of what a rebalance costs as groups grow; `bench.handle_frame` measures the whole
request path of one JoinGroup.

- Classic groups (coordinator/coordinator.py) of 1, 10 and 100 members: every member
  rejoins (JoinGroup), every member syncs (the leader last, with the assignment), rounds
  of that; then every member leaves (LeaveGroup). Each call takes its undo first
  (registry.undoable), as on the broker.
- KIP-848: the uniform assignor's target (coordinator/consumer/assignors.py) as members
  join one by one, up to 10 and 100 members, on topics of 10 and 100 partitions.

There is no Tansu column: these are calls inside kafka-shim. Run it from two checkouts to
compare them.

    python -m bench.group_calls [--rounds 5]
"""

from __future__ import annotations

import argparse
import itertools
import time
import uuid
from statistics import median
from typing import Any

from bench.request_cpu import subscription
from kafka_shim.shim.coordinator.config import CoordinatorConfig
from kafka_shim.shim.coordinator.consumer.assignors import uniform
from kafka_shim.shim.coordinator.consumer.types import TopicInfo
from kafka_shim.shim.coordinator.coordinator import GroupCoordinator
from kafka_shim.shim.coordinator.group import Group
from kafka_shim.shim.coordinator.types import JoinRequest, MemberIdentity, Protocol, SyncRequest

GROUP = "g-bench-calls"
PROTOCOLS = (Protocol("range", subscription("t")),)


class ClassicGroup:
    """One classic group at a coordinator; its outcomes are dropped (no log, no deadlines)."""

    def __init__(self, members: int) -> None:
        self.coordinator = GroupCoordinator(CoordinatorConfig(initial_rebalance_delay_ms=0))
        self.now = 1_000_000
        self.waiters = itertools.count()  # the answers are not read: only their cost counts
        self.member_ids: list[str] = []
        for index in range(members):
            self.join("", f"c{index}")
            self.member_ids.append(list(self.group().members)[-1])  # answered once all rejoin
        for _ in range(2):  # those answered before the last newcomer rejoin its rebalance
            for member_id in self.member_ids:
                self.join(member_id, "c")
        self.sync_all()

    def group(self) -> Group:
        group = self.coordinator.group(GROUP)
        assert group is not None
        return group

    def join(self, member_id: str, client: str) -> None:
        request = JoinRequest(
            GROUP, member_id, 45_000, 60_000, "consumer", PROTOCOLS, None, client, "/h", False
        )
        self.now += 1
        self.coordinator.join_group(request, self.now, next(self.waiters))

    def sync_all(self) -> None:
        group = self.group()
        assignments = {member_id: b"assignment" for member_id in group.members}
        for member_id in [*(m for m in group.members if m != group.leader_id), group.leader_id]:
            assert member_id is not None
            mine = assignments if member_id == group.leader_id else {}
            request = SyncRequest(GROUP, group.generation_id, member_id, assignments=mine)
            self.now += 1
            self.coordinator.sync_group(request, self.now, next(self.waiters))
        assert group.state.name == "STABLE", group.state

    def leave_all(self) -> None:
        for member_id in self.member_ids:
            self.coordinator.leave_group(GROUP, [MemberIdentity(member_id)], self.now)


def classic_calls(members: int, rounds: int) -> dict[str, float]:
    """CPU µs per JoinGroup, SyncGroup and LeaveGroup in a group of `members`."""
    group = ClassicGroup(members)
    spent = {"JoinGroup": 0.0, "SyncGroup": 0.0}
    for _ in range(rounds):
        started = time.process_time()
        for member_id in group.member_ids:
            group.join(member_id, "c")
        spent["JoinGroup"] += time.process_time() - started
        started = time.process_time()
        group.sync_all()
        spent["SyncGroup"] += time.process_time() - started
    started = time.process_time()
    group.leave_all()
    per_call = {kind: s / (rounds * members) * 1e6 for kind, s in spent.items()}
    per_call["LeaveGroup"] = (time.process_time() - started) / members * 1e6
    return per_call


def uniform_target(partitions: int, members: int) -> float:
    """CPU µs per uniform target as `members` join one by one (a target per join)."""
    topics = {"t": TopicInfo(uuid.UUID(int=1), "t", partitions)}
    started, targets = time.process_time(), 0
    previous: dict[str, Any] = {}
    for count in range(1, members + 1):
        subscriptions = {f"m{index:03d}": frozenset({"t"}) for index in range(count)}
        previous = uniform(subscriptions, topics, previous, dict.fromkeys(subscriptions))
        targets += 1
    return (time.process_time() - started) / targets * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    for members in (1, 10, 100):
        samples = [classic_calls(members, max(3, 300 // members)) for _ in range(args.rounds)]
        row = "  ".join(f"{kind} {median(s[kind] for s in samples):7.1f}" for kind in samples[0])
        print(f"classic, {members:3d} members: {row} µs CPU/call (median of {args.rounds})")
    for partitions, members in ((10, 10), (100, 100)):
        spent = median(uniform_target(partitions, members) for _ in range(args.rounds))
        print(f"KIP-848 uniform target, {partitions} partitions, joins up to {members}: {spent:7.1f} µs CPU")


if __name__ == "__main__":
    main()
