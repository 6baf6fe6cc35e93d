"""A KIP-848 member joining while `__consumer_offsets` cannot be written, through a real
client (confluent-kafka, group.protocol=consumer): its heartbeats are answered
NOT_COORDINATOR, the group stays as the log has it (the first member alone, keeping its
partitions), and once writes succeed again the member joins without a restart."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import Consumer

from kafka_shim.shim.config.broker_config import BrokerConfig
from kafka_shim.shim.server import BrokerThread
from kafka_shim.storage.faults import FAULTS

GROUP, TOPIC = "g", "t"
DEADLINE_S = 10.0


@pytest.fixture
def broker(tmp_path: Path) -> Iterator[BrokerThread]:
    thread = BrokerThread(BrokerConfig(host="127.0.0.1", port=0, data_dir=tmp_path))
    thread.broker.topics.create(TOPIC, 2)
    thread.start()
    yield thread
    FAULTS.clear()
    thread.stop()


class Member:
    def __init__(self, bootstrap: str) -> None:
        self.consumer = Consumer(
            {
                "bootstrap.servers": bootstrap,
                "group.id": GROUP,
                "group.protocol": "consumer",
                "enable.auto.commit": False,
            }
        )
        self.assigned: set[int] = set()

        def on_assign(consumer: Any, partitions: list[Any]) -> None:
            self.assigned |= {p.partition for p in partitions}

        def on_revoke(consumer: Any, partitions: list[Any]) -> None:
            self.assigned -= {p.partition for p in partitions}

        self.consumer.subscribe([TOPIC], on_assign=on_assign, on_revoke=on_revoke)


def poll_until(members: list[Member], condition: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + DEADLINE_S
    while not condition():
        assert time.monotonic() < deadline, f"not within {DEADLINE_S} s: {what}"
        for member in members:
            member.consumer.poll(0.05)


def test_a_join_while_the_log_cannot_be_written_is_refused_then_goes_through(broker: BrokerThread) -> None:
    def group_size() -> int:
        """Looked up and counted in one call on the broker's thread: from this one, a refused
        join can be seen between its change in memory and the replay that replaces the group,
        and a group object kept from one call to the next may be one a replay has replaced."""
        group = broker.broker.consumer_groups.group(GROUP)
        assert group is not None
        return len(group.members)

    first = Member(broker.bootstrap)
    second: Member | None = None
    try:
        poll_until([first], lambda: first.assigned == {0, 1}, "the first member owns both partitions")
        fault = FAULTS.arm("log")
        second = Member(broker.bootstrap)
        members = [first, second]
        poll_until(members, lambda: fault.hits >= 3, "the second member's join was refused three times")
        assert broker.call(group_size) == 1
        assert (first.assigned, second.assigned) == ({0, 1}, set())
        FAULTS.clear()
        poll_until(
            members,
            lambda: len(first.assigned) == len(second.assigned) == 1,
            "each member owns one partition once writes succeed",
        )
    finally:
        first.consumer.close()
        if second is not None:
            second.consumer.close()
