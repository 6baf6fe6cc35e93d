"""KIP-848's online migration: a group's offsets are committed by a classic consumer, then 3
classic members (the client's default assignor) join; one by one each is replaced by a
`group.protocol=consumer` member (the first one upgrades the group), then one by one back
(the last consumer member's leave downgrades it). After every step the live members own
every partition exactly once, each its share; no committed offset went back at the end.
The consumer-protocol members are the client's own where it has a KIP-848 consumer, else
confluent-kafka's: every client takes part with its classic members."""

from __future__ import annotations

from dataclasses import replace

from compat.groups import GroupMembers, shares
from compat.scenario import Context
from compat.scenarios_data import group_offsets, topic_with_messages
from compat.scenarios_groups import CONVERGE_DEADLINE_S, SESSION_TIMEOUT_MS
from compat.scenarios_kip848 import CLIENTS

MESSAGES = 300
FIRST_READ = 120

# Where the client has no KIP-848 consumer, these members speak the consumer protocol.
CONSUMER_PROTOCOL_CLIENT = "confluent-kafka"


def migration(context: Context) -> None:
    base = topic_with_messages(context, MESSAGES, 30)
    context.run(replace(base, op="consume", count=FIRST_READ, group_protocol="classic"))
    committed = group_offsets(context, base).partition_map("committed")
    assert committed, "the first consumer committed nothing"
    classic = replace(
        base,
        op="member",
        group_protocol="classic",
        assignor=context.driver.default_assignor(),
        session_timeout_ms=SESSION_TIMEOUT_MS,
        timeout_s=CONVERGE_DEADLINE_S,
    )
    consumer = replace(classic, group_protocol="consumer", assignor="uniform")
    upgraded_by = context.driver.name if context.driver.name in CLIENTS else CONSUMER_PROTOCOL_CLIENT
    context.notes.append(f"consumer-protocol members: {upgraded_by}")
    upgraded_driver = context.other_driver(upgraded_by)
    with GroupMembers(context.driver, classic) as members:
        members.start_staggered(["a", "b", "c"])
        context.observe("classic: shares", shares(members.wait_converged(CONVERGE_DEADLINE_S)))
        for name in ("a", "b", "c"):
            members.close(name)
            members.template = consumer
            members.start(f"{name}+", driver=upgraded_driver)
            converged = members.wait_converged(CONVERGE_DEADLINE_S)
            context.observe(f"{name} upgraded: shares", shares(converged))
        for name in ("a", "b", "c"):
            members.close(f"{name}+")
            members.template = classic
            members.start(name)
            converged = members.wait_converged(CONVERGE_DEADLINE_S)
            context.observe(f"{name} downgraded: shares", shares(converged))
    # Members of some clients (kcat) commit what they read: offsets may move on, never back.
    after = group_offsets(context, base).partition_map("committed")
    kept = all(after.get(p, -1) >= offset for p, offset in committed.items())
    context.observe("committed offsets kept", kept)
    assert kept, f"committed offsets went back: {committed} -> {after}"
