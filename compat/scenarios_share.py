"""Share groups (KIP-932) through each client's share consumer: two members of one share group
on a topic of PARTITIONS partitions share SHARE_MESSAGES records; each record is accepted by
exactly one member, and a record released at its first delivery (compat.schema
`share_acknowledgement`) is delivered again and accepted then. Clients without a share consumer
(kafka-python, aiokafka, kafkajs, kcat) are n/a; so is a broker that has no share groups.
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import replace
from typing import Any

from compat import java_build
from compat.drivers import Driver, DriverProcess
from compat.scenario import ClientUnavailable, Context, NotApplicable
from compat.schema import Command, Observation, share_acknowledgement

SHARE_MESSAGES = 60
PARTITIONS = 2
MEMBERS = 2
SHARE_DEADLINE_S = 60.0
# Clients whose share consumer the matrix drives: librdkafka's (confluent-kafka 2.16+) through
# the share_member op of compat/clients/confluent.py, and kafka-clients 4.3's KafkaShareConsumer
# through compat/java/ShareDriver.
SHARE_CLIENTS = ("confluent-kafka", "java")


def not_applicable(driver: Driver) -> str | None:
    if driver.name in SHARE_CLIENTS:
        return None
    return f"{driver.name} has no share consumer (KIP-932)"


def share_groups(context: Context) -> None:
    topic, group = context.name("share-topic"), context.name("share-group")
    base = context.command(op="create_topic", topic=topic, partitions=PARTITIONS, group=group, timeout_s=60)
    context.run(base)
    start_from_earliest(context, group)
    context.run(replace(base, op="produce", count=SHARE_MESSAGES))
    member = replace(base, op="share_member", timeout_s=SHARE_DEADLINE_S)
    members = [start_member(context, member) for _ in range(MEMBERS)]
    try:
        started = time.monotonic()
        wait_until_all_accepted(members)
        context.timing("all accepted s", time.monotonic() - started)
    finally:
        closed = [m.close(timeout_s=30) for m in members]
    deliveries = [o for observations in closed for o in observations if o.event == "share_delivery"]
    accepted = Counter(str(o.fields["value"]) for o in deliveries if o.fields["ack"] == "accept")
    context.observe("every record accepted once", accepted == Counter(str(i) for i in range(SHARE_MESSAGES)))
    released = sorted({str(o.fields["value"]) for o in deliveries if o.fields["ack"] == "release"}, key=int)
    context.observe(
        "released records, each delivered again",
        {v: sorted(int(o.fields["count"]) for o in deliveries if o.fields["value"] == v) for v in released},
    )
    context.observe("acknowledged as the schema says", all(map(acknowledged_as_the_schema_says, deliveries)))
    context.observe("every member closed", [any(o.event == "closed" for o in c) for c in closed])
    served = sum(1 for c in closed if any(o.event == "share_delivery" for o in c))
    context.notes.append(f"{served} of {MEMBERS} members were delivered records (timing decides)")


def start_from_earliest(context: Context, group: str) -> None:
    """share.auto.offset.reset=earliest for the group (a GROUP config, KIP-932), set by the
    harness with confluent-kafka's AdminClient: a broker without share groups refuses it."""
    try:
        from confluent_kafka.admin import (
            AdminClient,
            AlterConfigOpType,
            ConfigEntry,
            ConfigResource,
            ResourceType,
        )
    except ImportError as exc:
        raise ClientUnavailable(f"confluent-kafka sets the group's configs: {exc}") from exc
    entry = ConfigEntry("share.auto.offset.reset", "earliest", incremental_operation=AlterConfigOpType.SET)
    resource = ConfigResource(ResourceType.GROUP, group, incremental_configs=[entry])
    admin = AdminClient({"bootstrap.servers": context.broker.bootstrap})
    try:
        for future in admin.incremental_alter_configs([resource]).values():
            future.result(30)
    except Exception as exc:  # the broker's refusal, as the client reports it
        raise NotApplicable(f"the broker refuses share-group configs: {exc}") from exc


def start_member(context: Context, command: Command) -> DriverProcess:
    if context.client == "java":  # KafkaShareConsumer: kafka-clients 4.3 (ShareDriver)
        argv = ["java", "-XX:TieredStopAtLevel=1", "-Xmx256m", "-cp", java_build.compiled_classpath()]
        return DriverProcess("java-share", [*argv, "ShareDriver", command.to_json()])
    import confluent_kafka

    if not hasattr(confluent_kafka, "ShareConsumer"):
        raise NotApplicable(f"confluent-kafka {confluent_kafka.version()[0]} has no ShareConsumer (2.16+)")
    return context.driver.start(command)


def wait_until_all_accepted(members: list[DriverProcess]) -> None:
    """Until the members together accepted every record, or SHARE_DEADLINE_S (AssertionError)."""
    deadline = time.monotonic() + SHARE_DEADLINE_S
    while True:
        accepted = {
            str(o.fields["value"])
            for m in members
            for o in m.snapshot()
            if o.event == "share_delivery" and o.fields["ack"] == "accept"
        }
        if len(accepted) >= SHARE_MESSAGES:
            return
        failed = [m.first_error() for m in members if not m.running]
        assert not failed, f"a share member exited: {failed}"
        assert time.monotonic() < deadline, (
            f"{len(accepted)} of {SHARE_MESSAGES} accepted in {SHARE_DEADLINE_S}s"
        )
        time.sleep(0.2)  # re-check: the members' observations arrive on their reader threads


def acknowledged_as_the_schema_says(observation: Observation) -> bool:
    fields: dict[str, Any] = observation.fields
    return bool(fields["ack"] == share_acknowledgement(str(fields["value"]), int(fields["count"])))
