"""KIP-848 (group.protocol=consumer): the round trip, the 3-member join / close / SIGKILL
scenario with both server-side assignors, a static member that restarts within its session,
and a regex subscription that picks up a topic created after the member joined. Only
clients with a KIP-848 consumer take part."""

from __future__ import annotations

import time
from dataclasses import replace

from compat import scenarios_data
from compat.drivers import Driver, DriverFailed
from compat.groups import Convergence, GroupMembers
from compat.scenario import Context
from compat.scenarios_groups import CONVERGE_DEADLINE_S, PARTITIONS, join_leave_crash_of
from compat.schema import Assignor

# Kafka clients that speak ConsumerGroupHeartbeat: the Java client 4.x and librdkafka >= 2.12.
CLIENTS = ("java", "confluent-kafka")
SERVER_ASSIGNORS: tuple[Assignor, ...] = ("uniform", "range")
LATER_TOPIC_PARTITIONS = 3  # the regex's second topic: partitions 1 and 2 show it was assigned
# kafka-shim's group.consumer.session.timeout.ms and heartbeat interval, and a margin: the
# others must see no rebalance for as long as one caused by the restart would take to arrive.
QUIET_WINDOW_S = 10 + 0.5 + 2


def not_applicable(driver: Driver) -> str | None:
    if driver.name in CLIENTS:
        return None
    return f"{driver.name} has no KIP-848 consumer (group.protocol=consumer)"


def kip848(context: Context) -> None:
    context.group_protocol = "consumer"
    scenarios_data.roundtrip(context)
    for assignor in SERVER_ASSIGNORS:
        template = context.create_topic(context.name(f"topic-{assignor}"), PARTITIONS)
        template = replace(
            template,
            group=context.name(f"group-{assignor}"),
            assignor=assignor,
            timeout_s=CONVERGE_DEADLINE_S,
        )
        join_leave_crash_of(context, template, f"{assignor}: ")
    static_member_restarts(context)
    regex_picks_up_new_topic(context)


def wait_balanced(members: GroupMembers) -> Convergence:
    """Every partition owned once can hold mid-reconciliation (a member owning part of its
    target): wait for the balance the uniform assignor settles on, so a restart is compared
    with the assignment the member really had."""
    deadline = time.monotonic() + CONVERGE_DEADLINE_S
    while True:
        converged = members.wait_converged(max(0.1, deadline - time.monotonic()))
        if all(len(owned) == PARTITIONS // len(converged.owners) for owned in converged.owners.values()):
            return converged
        if time.monotonic() > deadline:
            raise DriverFailed(f"no balanced assignment within {CONVERGE_DEADLINE_S}s:\n{members.describe()}")
        time.sleep(0.05)


def static_member_restarts(context: Context) -> None:
    """A static member closes (epoch -2: back soon) and starts again with a new member id:
    it gets its partitions back and the others see no rebalance."""
    template = context.create_topic(context.name("topic-static"), PARTITIONS)
    template = replace(
        template, group=context.name("group-static"), assignor="uniform", timeout_s=CONVERGE_DEADLINE_S
    )
    instance = {"s": f"{template.group}-s"}
    with GroupMembers(context.driver, template) as members:
        members.start_staggered(["a", "b", "s"], static=instance)
        before = wait_balanced(members)
        others = {name: members.members[name] for name in ("a", "b")}
        seen = {name: len(member.events("assignment")) for name, member in others.items()}
        closed_at = time.time()
        members.close("s")
        restarted = members.start("s", instance["s"])
        back = restarted.wait_for(
            lambda obs: obs.event == "assignment" and bool(obs["partitions"]), timeout_s=CONVERGE_DEADLINE_S
        )
        context.timing("static: partitions back, from close s", back.ts - closed_at)
        same = sorted(back["partitions"]) == sorted(before.owners["s"])
        context.observe("static: same partitions after restart", same)
        assert same, f"static member got {back.fields} back, had {before.owners['s']}\n{members.describe()}"
        quiet_until = time.monotonic() + QUIET_WINDOW_S
        while time.monotonic() < quiet_until:
            for name, member in others.items():
                new = member.events("assignment")[seen[name] :]
                if new:
                    raise DriverFailed(
                        f"{name} was rebalanced by the static restart: {new}\n{members.describe()}"
                    )
                assert member.running, member.diagnosis()
            time.sleep(0.1)
        context.observe("static: others rebalanced", False)


def regex_picks_up_new_topic(context: Context) -> None:
    prefix = context.name("regex")
    template = context.create_topic(f"{prefix}-a", 1)
    template = replace(
        template,
        group=context.name("group-regex"),
        topic_pattern=f"{prefix}-.*",
        timeout_s=CONVERGE_DEADLINE_S,
    )
    with GroupMembers(context.driver, template) as members:
        member = members.start("r")
        member.wait_for(
            lambda obs: obs.event == "assignment" and obs["partitions"] == [0], CONVERGE_DEADLINE_S
        )
        created_at = time.time()
        context.create_topic(f"{prefix}-b", LATER_TOPIC_PARTITIONS)
        later = member.wait_for(
            lambda obs: obs.event == "assignment" and sorted(obs["partitions"]) == [0, 1, 2],
            CONVERGE_DEADLINE_S,
        )
        context.timing("regex: later topic assigned, from its creation s", later.ts - created_at)
        context.observe("regex: partitions owned after the second topic", sorted(later["partitions"]))
