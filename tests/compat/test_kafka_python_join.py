"""A kafka-python 3.0.12 bug, reproduced deterministically against the target broker.

kafka-python runs a JoinGroup/SyncGroup round as a background task and collects it only
from inside `poll()`. A round that completes while the application is outside `poll()`
is never collected:

- if the member still needs to rejoin (`rejoin_needed`, as after a heartbeat's
  REBALANCE_IN_PROGRESS), the next `poll()` sees a finished task, discards its result and
  starts another round: a consumer polling with `timeout_ms=0` between pauses rejoins
  forever and never gets its partitions;
- if only the leader's metadata snapshot asked for the rejoin (partitions added, or a new
  group's first assignment made before the topic's metadata arrived), the leader's own
  `_perform_assignment` has made the snapshots equal by then, so the next `poll()` sees no
  need to rejoin at all: the member stays REBALANCING with heartbeats off, keeps its old
  partitions, and is expelled at its session timeout while the others carry on.

The broker's part is only what Kafka does too: answer promptly, and hold the leader's
JoinGroup until the other member rejoins. The second case is the "first member stall" the
100 groups x 3 scenario used to hit, which is why the kafka-python driver fetches the
topic's metadata before its first poll. When kafka-python fixes this, the strict xfails
turn red and the driver's workaround can go.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Iterator

import pytest
from kafka import KafkaConsumer
from kafka.admin import KafkaAdminClient, NewPartitions, NewTopic

from compat.clients.kafka_python import subscribe
from compat.targets import Broker, start_target
from tests.helpers import wait_until

pytestmark = pytest.mark.clients

DEADLINE_S = 10.0
# The steps before the bug's trigger get room for a loaded CI machine: they only set it up.
SETUP_DEADLINE_S = 30.0
# Before the partitions are added the leader polls steadily, so its rounds are collected.
# Then it is outside poll() almost all the time, as an application that processes what
# each poll returns is, polling with a short timeout: its round then completes between two
# polls (the bug's trigger) all but certainly (a 10 ms window in 2 s).
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
        # As the compat driver does: with the partitions known before the first join, the
        # first assignment is complete, so no metadata-driven rejoin strands a test's setup.
        subscribe(self.consumer, topic)
        self._pause_s = pause_s
        self._poll_ms = poll_ms
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def pace(self, pause_s: float, poll_ms: int) -> None:
        """From the next poll on: poll for `poll_ms`, then pause `pause_s`."""
        self._pause_s, self._poll_ms = pause_s, poll_ms

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
    """The bug's signature for a leader; any other failure of its test is a real one."""


class NeverAssigned(AssertionError):
    """The bug's signature for a lone member that polls without waiting."""


@pytest.fixture
def broker() -> Iterator[Broker]:
    with start_target() as running:
        yield running


@pytest.fixture
def admin(broker: Broker) -> Iterator[KafkaAdminClient]:
    client = KafkaAdminClient(bootstrap_servers=broker.bootstrap)
    yield client
    client.close()


@pytest.fixture
def members() -> Iterator[list[Member]]:
    """Members a test starts; closed when it ends, however it ends."""
    started: list[Member] = []
    yield started
    for member in started:
        member.close()


def new_topic(admin: KafkaAdminClient, partitions: int) -> tuple[str, str]:
    """A fresh topic, and a fresh group name to consume it with."""
    topic = f"join-{uuid.uuid4().hex[:8]}"
    admin.create_topics([NewTopic(topic, partitions, 1)])
    return topic, f"g-{topic}"


def kafka_python_bug(signature: type[AssertionError], what: str) -> pytest.MarkDecorator:
    """Strict: a fixed kafka-python turns the test red; only `signature` counts as the bug."""
    reason = f"kafka-python 3.0.12: {what} (see the module docstring)"
    return pytest.mark.xfail(strict=True, raises=signature, reason=reason)


@kafka_python_bug(NeverAssigned, "a join round completed outside poll() is discarded and redone")
def test_a_consumer_polling_without_waiting_gets_its_partitions(
    broker: Broker, admin: KafkaAdminClient, members: list[Member]
) -> None:
    topic, group = new_topic(admin, 1)
    member = Member(broker.bootstrap, topic, group, pause_s=0.3, poll_ms=0)
    members.append(member)
    wait_until(
        lambda: member.partitions() == {0},
        "the only member owns the partition",
        deadline_s=DEADLINE_S,
        error=NeverAssigned,
    )


@kafka_python_bug(LeaderStranded, "a leader whose round completes outside poll() stays REBALANCING")
def test_leader_rejoining_for_new_partitions_takes_its_share(
    broker: Broker, admin: KafkaAdminClient, members: list[Member]
) -> None:
    topic, group = new_topic(admin, 2)
    # Client ids order the member ids, hence range's shares; a short metadata max age
    # makes the leader notice the new partitions promptly.
    leader = Member(broker.bootstrap, topic, group, 0.0, client_id="a", metadata_max_age_ms=300)
    members.append(leader)
    wait_until(
        lambda: leader.partitions() == {0, 1},
        "the first member owns both partitions",
        deadline_s=SETUP_DEADLINE_S,
    )
    follower = Member(broker.bootstrap, topic, group, 0.0, client_id="b")
    members.append(follower)
    wait_until(
        lambda: follower.partitions() == {1},
        "range gives the second member partition 1",
        deadline_s=SETUP_DEADLINE_S,
    )
    wait_until(
        lambda: leader.partitions() == {0}, "and the leader keeps partition 0", deadline_s=SETUP_DEADLINE_S
    )

    leader.pace(LEADER_PAUSE_S, LEADER_POLL_MS)
    admin.create_partitions({topic: NewPartitions(4)})

    wait_until(
        lambda: follower.partitions() == {2, 3}, "the follower's share of 4 partitions", deadline_s=DEADLINE_S
    )
    wait_until(
        lambda: leader.partitions() == {0, 1},
        "the leader's share of 4 partitions",
        deadline_s=DEADLINE_S,
        error=LeaderStranded,
    )
