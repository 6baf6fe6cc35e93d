"""A kafka-python 3.0.12 bug, reproduced deterministically against the target broker.

When the group leader rejoins because *its metadata* changed (partitions added, or a new
group's first assignment made before the topic's metadata arrived), nothing sets its
`rejoin_needed`: only the metadata snapshot says "rejoin". The JoinGroup/SyncGroup round
runs as a background task; if it completes while the application is outside `poll()`,
the leader's `_perform_assignment` has already made the snapshots equal, so the next
`poll()` sees no need to rejoin and never collects the finished task. The member stays
REBALANCING with heartbeats disabled, keeps its old partitions, and is expelled when its
session expires; the others carry on without it.

The broker's part is only what Kafka does too: hold the leader's JoinGroup until the
other member rejoins (after its next heartbeat). This is the "first member stall" the
100 groups x 3 scenario used to hit, which is why the kafka-python driver fetches the
topic's metadata before its first poll. When kafka-python fixes this, the strict xfail
turns red and the driver's workaround can go.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable, Iterator

import pytest
from kafka import KafkaConsumer
from kafka.admin import KafkaAdminClient, NewPartitions, NewTopic

from compat.targets import Broker, start_target

DEADLINE_S = 10.0
# The leader is outside poll() almost all the time, as an application that processes what
# each poll returns is, and polls with a short timeout: the round then completes between two
# polls (the bug's trigger) all but certainly (a 10 ms window in 2 s), not one time in ten.
LEADER_PAUSE_S = 2.0
LEADER_POLL_MS = 10


class Member:
    """A kafka-python consumer polling on its own thread."""

    def __init__(
        self, bootstrap: str, topic: str, group: str, pause_s: float, poll_ms: int = 100, **options: object
    ) -> None:
        self.consumer = KafkaConsumer(
            bootstrap_servers=bootstrap, group_id=group, enable_auto_commit=False, **options
        )
        self.consumer.subscribe([topic])
        self._pause_s = pause_s
        self._poll_ms = poll_ms
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            self.consumer.poll(timeout_ms=self._poll_ms)
            self._stop.wait(self._pause_s)

    def partitions(self) -> set[int]:
        return {tp.partition for tp in self.consumer.assignment()}

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=10)
        self.consumer.close()


class LeaderStranded(AssertionError):
    """The bug's signature; any other failure of the test is a real one."""


def wait_until(
    condition: Callable[[], bool], what: str, error: type[AssertionError] = AssertionError
) -> None:
    deadline = time.monotonic() + DEADLINE_S
    while not condition():
        if time.monotonic() > deadline:
            raise error(f"not within {DEADLINE_S}s: {what}")
        time.sleep(0.05)


@pytest.fixture
def broker() -> Iterator[Broker]:
    with start_target() as running:
        yield running


@pytest.mark.clients
@pytest.mark.xfail(
    strict=True,
    raises=LeaderStranded,
    reason="kafka-python 3.0.12: a leader whose rejoin completes outside poll() stays "
    "REBALANCING for good (see the module docstring)",
)
def test_leader_rejoining_for_new_partitions_takes_its_share(broker: Broker) -> None:
    topic, group = f"leader-{uuid.uuid4().hex[:8]}", f"g-{uuid.uuid4().hex[:8]}"
    admin = KafkaAdminClient(bootstrap_servers=broker.bootstrap)
    members: list[Member] = []
    try:
        admin.create_topics([NewTopic(topic, 2, 1)])
        # Client ids order the member ids, hence range's shares; a short metadata max age
        # makes the leader notice the new partitions promptly.
        leader = Member(
            broker.bootstrap,
            topic,
            group,
            LEADER_PAUSE_S,
            LEADER_POLL_MS,
            client_id="a",
            metadata_max_age_ms=300,
        )
        members.append(leader)
        wait_until(lambda: leader.partitions() == {0, 1}, "the first member owns both partitions")
        follower = Member(broker.bootstrap, topic, group, 0.0, client_id="b")
        members.append(follower)
        wait_until(lambda: follower.partitions() == {1}, "range gives the second member partition 1")
        wait_until(lambda: leader.partitions() == {0}, "and the leader keeps partition 0")

        admin.create_partitions({topic: NewPartitions(4)})

        wait_until(lambda: follower.partitions() == {2, 3}, "the follower's share of 4 partitions")
        wait_until(
            lambda: leader.partitions() == {0, 1}, "the leader's share of 4 partitions", LeaderStranded
        )
    finally:
        for member in members:
            member.close()
        admin.close()
