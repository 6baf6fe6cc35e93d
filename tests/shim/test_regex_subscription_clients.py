"""A consumer-protocol member (confluent-kafka, `group.protocol=consumer`) resubscribing with
a regex, as librdkafka's own 0045 do_test_resubscribe_with_regex does against Kafka: the
broker resolves a new regex off the heartbeat, so a subscription to a regex and a literal
topic is assigned the literal topic's partitions first and the regex's at a later heartbeat
(Kafka's GroupMetadataManager; librdkafka's test expects two assignments, 2 then 8); and
two members on a regex take two topics created together in one rebalance, as librdkafka's
0113 n_wildcard expects (about 11 s: the 10 s between a group's regex resolutions)."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from confluent_kafka import Consumer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from kafka_shim.shim.config.broker_config import BrokerConfig
from kafka_shim.shim.server import BrokerThread

pytestmark = pytest.mark.clients

DEADLINE_S = 15.0


@pytest.fixture
def broker() -> Iterator[BrokerThread]:
    thread = BrokerThread(BrokerConfig(host="127.0.0.1", port=0))
    thread.start()
    yield thread
    thread.stop()


class Rebalances:
    """The member's rebalance callbacks, in order: ("assign" | "revoke", {(topic, partition)})."""

    def __init__(self) -> None:
        self.events: list[tuple[str, set[tuple[str, int]]]] = []

    def assign(self, _consumer: Any, partitions: list[TopicPartition]) -> None:
        self.events.append(("assign", {(p.topic, p.partition) for p in partitions}))

    def revoke(self, _consumer: Any, partitions: list[TopicPartition]) -> None:
        self.events.append(("revoke", {(p.topic, p.partition) for p in partitions}))


def poll_until(consumer: Consumer, rebalances: Rebalances, count: int) -> None:
    """Poll (the callbacks run in poll) until `count` rebalance events came, or fail."""
    deadline = time.monotonic() + DEADLINE_S
    while len(rebalances.events) < count:
        assert time.monotonic() < deadline, f"not within {DEADLINE_S}s: {count} events, {rebalances.events}"
        consumer.poll(0.1)


def test_literal_topic_first_then_the_regex_topics(broker: BrokerThread) -> None:
    run = uuid.uuid4().hex[:8]
    regex1, regex2, literal = f"r{run}_topic_regex1", f"r{run}_topic_regex2", f"r{run}_topic_a"
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    for future in admin.create_topics(
        [NewTopic(regex1, 4, 1), NewTopic(regex2, 4, 1), NewTopic(literal, 2, 1)]
    ).values():
        future.result(timeout=10)
    pattern = f"^.*{run}_topic_regex.*"
    rebalances = Rebalances()
    consumer = Consumer(
        {"bootstrap.servers": broker.bootstrap, "group.id": f"regex-{run}", "group.protocol": "consumer"}
    )
    callbacks = {"on_assign": rebalances.assign, "on_revoke": rebalances.revoke}
    try:
        both = {(t, p) for t in (regex1, regex2) for p in range(4)}
        consumer.subscribe([pattern], **callbacks)
        poll_until(consumer, rebalances, 1)
        assert rebalances.events == [("assign", both)]
        consumer.unsubscribe()
        poll_until(consumer, rebalances, 2)
        assert rebalances.events[1] == ("revoke", both)

        consumer.subscribe([pattern, literal], **callbacks)
        poll_until(consumer, rebalances, 4)
        assert rebalances.events[2:] == [("assign", {(literal, 0), (literal, 1)}), ("assign", both)]
    finally:
        consumer.close()


class AssignCounts:
    """librdkafka 0113's DefaultRebalanceCb counts: assignments, the non-empty ones, revocations."""

    def __init__(self) -> None:
        self.assigned = self.non_empty = self.revoked = 0

    def assign(self, _consumer: Any, partitions: list[TopicPartition]) -> None:
        self.assigned += 1
        self.non_empty += bool(partitions)

    def revoke(self, _consumer: Any, _partitions: list[TopicPartition]) -> None:
        self.revoked += 1


def test_two_members_on_a_regex_take_topics_created_together_in_one_rebalance(broker: BrokerThread) -> None:
    """librdkafka's 0113 n_wildcard in consumer-protocol mode: two members subscribe to a regex
    nothing matches, two matching topics are created one after the other; each member gets
    one non-empty assignment (Kafka resolves a group's regexes at most every 10 s, so both
    topics come in one rebalance), never a revocation."""
    run = uuid.uuid4().hex[:8]
    base = f"w{run}"
    members = []
    for _ in range(2):
        counts = AssignCounts()
        consumer = Consumer(
            {"bootstrap.servers": broker.bootstrap, "group.id": f"wild-{run}", "group.protocol": "consumer"}
        )
        consumer.subscribe([f"^{base}_."], on_assign=counts.assign, on_revoke=counts.revoke)
        members.append((consumer, counts))
    try:
        for consumer, _ in members:
            consumer.poll(0.5)
        admin = AdminClient({"bootstrap.servers": broker.bootstrap})
        for name in (f"{base}_1", f"{base}_2"):
            admin.create_topics([NewTopic(name, 2, 1)])[name].result(timeout=10)
        deadline = time.monotonic() + 30
        while not all(len(consumer.assignment()) == 2 for consumer, _ in members):
            assert time.monotonic() < deadline, "the two topics were not shared out within 30 s"
            for consumer, _ in members:
                consumer.poll(0.2)
        assert [(c.non_empty, c.revoked) for _, c in members] == [(1, 0), (1, 0)]
    finally:
        for consumer, _ in members:
            consumer.close()
