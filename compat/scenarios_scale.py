"""Scale scenarios: 100 groups of 3 members at once, and one group of 50 members.

All members of a scenario live in one driver process (threads or async tasks, see the
``swarm`` op), so hundreds of members fit the CI machine. Convergence of every group is
asserted with a deadline; timings (overall and per-group percentiles) are reported.
"""

from __future__ import annotations

import statistics
import time
from collections import defaultdict
from dataclasses import replace

from compat.drivers import DriverFailed, DriverProcess
from compat.groups import owns_each_once
from compat.scenario import Context

SWARM_DEADLINE_S = 240.0
# Kafka's default session timeout (KIP-735): hundreds of consumers share one process here,
# and a thread-per-consumer client (kafka-python) on a busy 2-core machine can miss a 6 s
# session's heartbeats, which turns the scenario into a rebalance storm of the harness's
# own making.
SWARM_SESSION_TIMEOUT_MS = 45000
CLOSE_DEADLINE_S = 120.0


def group_owners(swarm: DriverProcess) -> tuple[dict[str, dict[str, list[int]]], dict[str, float]]:
    """Per group: each member's latest partitions; and when each group's latest assignment came."""
    owners: dict[str, dict[str, list[int]]] = defaultdict(dict)
    latest_at: dict[str, float] = {}
    for obs in swarm.events("assignment"):
        owners[obs["group"]][obs["member"]] = list(obs["partitions"])
        latest_at[obs["group"]] = obs.ts
    return owners, latest_at


def wait_all_converged(
    swarm: DriverProcess, groups: int, members: int, partitions: int
) -> tuple[float, dict[str, float]]:
    """Poll until every group has all its members and owns each partition once; returns when."""
    deadline = time.monotonic() + SWARM_DEADLINE_S
    while True:
        owners, latest_at = group_owners(swarm)
        done = {
            group
            for group, owned in owners.items()
            if len(owned) == members and owns_each_once(owned, partitions)
        }
        if len(done) == groups:
            return max(latest_at.values()), latest_at
        if not swarm.running:
            raise DriverFailed(f"swarm exited early\n{swarm.diagnosis()}")
        if time.monotonic() > deadline:
            missing = sorted(set(owners) - done)[:5] or ["(no assignments at all)"]
            detail = {group: owners.get(group) for group in missing}
            raise DriverFailed(
                f"{len(done)}/{groups} groups converged in {SWARM_DEADLINE_S}s; "
                f"e.g. {detail}\n{swarm.diagnosis()}"
            )
        time.sleep(0.2)


def run_swarm(context: Context, groups: int, members: int, partitions: int) -> None:
    template = replace(
        context.create_topic(context.name("topic"), partitions),
        op="swarm",
        group=context.name("group"),
        assignor=context.driver.default_assignor(),
        groups=groups,
        members=members,
        session_timeout_ms=SWARM_SESSION_TIMEOUT_MS,
        timeout_s=SWARM_DEADLINE_S,
    )
    started = time.time()
    with context.driver.start(template) as swarm:
        converged_at, latest_at = wait_all_converged(swarm, groups, members, partitions)
        context.timing(f"all {groups * members} members placed, from start s", converged_at - started)
        first_subscribe: dict[str, float] = {}
        for obs in swarm.events("subscribing"):
            first_subscribe.setdefault(obs["group"], obs.ts)
        per_group = sorted(latest_at[group] - first_subscribe[group] for group in latest_at)
        if len(per_group) > 1:
            context.timing("per group, first subscribe to converged: median s", statistics.median(per_group))
            context.timing("per group: p95 s", per_group[int(0.95 * (len(per_group) - 1))])
        context.timing("per group: max s", per_group[-1])
        context.observe("groups converged", groups)
        context.observe("members per group", members)
        closing = time.monotonic()
        swarm.close(timeout_s=CLOSE_DEADLINE_S)
        context.timing("all members closed s", time.monotonic() - closing)
        closed = len(swarm.events("closed"))
        context.observe("members closed cleanly", closed)
        assert closed >= groups * members, f"only {closed} of {groups * members} members closed"


def groups_100x3(context: Context) -> None:
    """100 groups of 3 members each, all started at once, on one 3-partition topic."""
    run_swarm(context, groups=100, members=3, partitions=3)


def group_of_50(context: Context) -> None:
    """One group of 50 members, all started at once, on a 50-partition topic (one each)."""
    run_swarm(context, groups=1, members=50, partitions=50)
