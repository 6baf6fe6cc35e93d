"""KIP-848 (group.protocol=consumer): the round trip, the 3-member join / close / SIGKILL
scenario with both server-side assignors, and a regex subscription that picks up a topic
created after the member joined. Only clients with a KIP-848 consumer take part."""

from __future__ import annotations

import time
from dataclasses import replace

from compat import scenarios_data
from compat.drivers import Driver
from compat.groups import GroupMembers
from compat.scenario import Context
from compat.scenarios_groups import CONVERGE_DEADLINE_S, PARTITIONS, join_leave_crash_of
from compat.schema import Assignor

# Kafka clients that speak ConsumerGroupHeartbeat: the Java client 4.x and librdkafka >= 2.12.
CLIENTS = ("java", "confluent-kafka")
SERVER_ASSIGNORS: tuple[Assignor, ...] = ("uniform", "range")
LATER_TOPIC_PARTITIONS = 3  # the regex's second topic: partitions 1 and 2 show it was assigned


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
    regex_picks_up_new_topic(context)


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
