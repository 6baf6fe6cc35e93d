"""The console's timeline against real clients (confluent-kafka): the rebalance a second member
starts names that member's JoinGroup, PreparingRebalance shows, and both members' heartbeats
fold into one event each while the group is stable."""

from __future__ import annotations

import pytest
from confluent_kafka import Consumer

from kafka_shim.pytest_plugin import KafkaShim
from kafka_shim.shim.groups.journal import GroupEvent
from tests.helpers import wait_until

pytestmark = pytest.mark.clients

GROUP, TOPIC = "billing", "orders"


def member(kafka_shim: KafkaShim, name: str) -> Consumer:
    consumer = Consumer(
        {
            "bootstrap.servers": kafka_shim.bootstrap,
            "group.id": GROUP,
            "client.id": name,
            "heartbeat.interval.ms": 100,
            "session.timeout.ms": 6000,
        }
    )
    consumer.subscribe([TOPIC])
    return consumer


def stable_again(events: list[GroupEvent]) -> list[GroupEvent]:
    """The events since the group became Stable after its second rebalance: a member's heartbeat
    that came before the leader's SyncGroup (CompletingRebalance) is its own event."""
    starts = [i for i, e in enumerate(events) if e.detail.startswith("rebalance #2: ")]
    stable = [
        i
        for i, e in enumerate(events)
        if starts and i > starts[0] and e.detail.startswith("CompletingRebalance -> Stable")
    ]
    return events[stable[-1] + 1 :] if stable else []


def test_the_rebalance_names_the_member_whose_join_started_it(kafka_shim: KafkaShim) -> None:
    kafka_shim.create_topic(TOPIC, 2)
    journal = kafka_shim.broker.group_journal
    members = [member(kafka_shim, "billing-0")]
    try:

        def assigned(count: int) -> bool:
            for consumer in members:
                consumer.poll(0.05)
            return all(len(c.assignment()) == 2 // count for c in members) and len(members) == count

        wait_until(lambda: assigned(1), deadline_s=20, what="billing-0 owning both partitions")
        members.append(member(kafka_shim, "billing-1"))
        wait_until(lambda: assigned(2), deadline_s=20, what="one partition each")

        def both_beat_thrice() -> bool:  # each heartbeats about every 100 ms
            for consumer in members:
                consumer.poll(0.05)
            after = stable_again(kafka_shim._thread.call(lambda: journal.events(GROUP)))
            return len({e.member_id for e in after if e.kind == "heartbeat" and e.count >= 3}) == 2

        wait_until(both_beat_thrice, deadline_s=20, what="both members' heartbeats folded, 3 or more each")
        events = kafka_shim._thread.call(lambda: journal.events(GROUP))  # read on the broker's thread
    finally:
        for consumer in members:
            consumer.close()
    details = [e.detail for e in events]
    second = next(d for d in details if d.startswith("rebalance #2: "))
    assert second.startswith("rebalance #2: JoinGroup from billing-1-"), details
    assert any(d.startswith("Stable -> PreparingRebalance (JoinGroup from billing-1-") for d in details), (
        details
    )
    after = stable_again(events)
    beats = [(e.member_id, e.count) for e in after if e.kind == "heartbeat"]
    assert len(beats) == 2 and len({m for m, _ in beats}) == 2 and all(c >= 3 for _, c in beats), after
