"""KIP-848's online migration with real clients: a 3-member group of classic consumers
(kafka-python, or confluent-kafka with the classic protocol) is upgraded member by member to
confluent-kafka members with `group.protocol=consumer`, then downgraded the same way.

Each member records what it owns in its own rebalance callbacks (a partition is given up in
the callback, before the broker can hear of it, and taken in the callback that hands it
over), so a partition owned by two members at any moment is seen when the second takes it.
After every step all partitions are owned, the broker describes the group as it should be
(ConsumerGroupDescribe while a consumer-protocol member is in it, DescribeGroups once it is
classic), and the committed offsets only moved forward; at the end every record produced
was consumed and the committed offsets reach the end of the log."""

from __future__ import annotations

import asyncio
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from aiokafka import AIOKafkaConsumer
from aiokafka.abc import ConsumerRebalanceListener as AIOConsumerRebalanceListener
from aiokafka.coordinator.assignors.range import RangePartitionAssignor as AIORangePartitionAssignor
from confluent_kafka import Consumer, KafkaError, KafkaException, Producer
from kafka import ConsumerRebalanceListener, KafkaConsumer
from kafka.coordinator.assignors.range import RangePartitionAssignor

from compat.clients.kafka_python import subscribe
from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.shim.config.broker_config import BrokerConfig
from kafka_shim.shim.server import BrokerThread
from tests.wire import WireClient

pytestmark = [pytest.mark.clients, pytest.mark.slow]

TOPIC = "migrating"
PARTITIONS = 6
STEP_DEADLINE_S = 45.0
RECORDS_PER_STEP = 30


# What Kafka answers a synchronous commit that a rebalance overtook: a classic member's
# generation moved on, or a consumer-protocol member's epoch was bumped while its commit was
# in flight (ConsumerGroup.validateOffsetCommit: STALE_MEMBER_EPOCH for any other epoch).
RACING_A_REBALANCE = frozenset(
    {KafkaError.ILLEGAL_GENERATION, KafkaError.REBALANCE_IN_PROGRESS, KafkaError.STALE_MEMBER_EPOCH}
)

# kafka-python's and aiokafka's consumer settings (the same keyword names in both).
PYTHON_CLIENT_CONSUMER: dict[str, Any] = {
    "auto_offset_reset": "earliest",
    "enable_auto_commit": False,
    "session_timeout_ms": 6000,
    "heartbeat_interval_ms": 500,
}


class Ownership:
    """Who owns which partition, as the members' callbacks say; a take of a partition someone
    else still holds is recorded as a violation."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.owner: dict[int, str] = {}
        self.violations: list[str] = []
        self.seen: set[str] = set()  # record values consumed
        self.errors: list[str] = []
        # Synchronous commits refused because a rebalance moved the member on (Kafka answers a
        # commit that races a rebalance so too): nothing acknowledged is lost, the member's
        # next commit covers those records, and the end check sees every record committed.
        self.refused_commits: list[str] = []
        self.committed: dict[int, int] = {}  # as of the last step

    def take(self, member: str, partitions: list[int]) -> None:
        with self.lock:
            for p in partitions:
                holder = self.owner.get(p)
                if holder is not None and holder != member:
                    self.violations.append(f"{member} took {p} while {holder} held it")
                self.owner[p] = member

    def give_up(self, member: str, partitions: list[int]) -> None:
        with self.lock:
            for p in partitions:
                if self.owner.get(p) == member:
                    del self.owner[p]

    def owners(self) -> dict[int, str]:
        with self.lock:
            return dict(self.owner)


class Member:
    """One consumer on its own thread: polls, records what it reads, and commits synchronously
    after each batch (so by the time a rebalance inside the next poll takes partitions away,
    what was read from them is committed)."""

    def __init__(self, name: str, ownership: Ownership, bootstrap: str, group: str) -> None:
        self.name = name
        self.ownership = ownership
        self.bootstrap, self.group = bootstrap, group
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self._run, name=name, daemon=True)

    def start(self) -> Member:
        self.thread.start()
        return self

    def stop(self) -> None:
        self.stopping.set()
        self.thread.join(30)
        assert not self.thread.is_alive(), f"{self.name} did not close"

    def _run(self) -> None:
        try:
            self.run()
        except Exception as exc:  # reported by the test, not lost in a thread
            self.ownership.errors.append(f"{self.name}: {exc!r}")

    def run(self) -> None:
        raise NotImplementedError


class ConfluentMember(Member):
    def __init__(
        self,
        name: str,
        ownership: Ownership,
        bootstrap: str,
        group: str,
        protocol: str,
        strategy: str = "cooperative-sticky",
    ) -> None:
        super().__init__(name, ownership, bootstrap, group)
        config: dict[str, Any] = {
            "bootstrap.servers": bootstrap,
            "group.id": group,
            "auto.offset.reset": "earliest",
            "enable.auto.commit": False,
        }
        if protocol == "consumer":
            config["group.protocol"] = "consumer"
        else:
            config.update(
                {
                    "partition.assignment.strategy": strategy,
                    "session.timeout.ms": 6000,
                    "heartbeat.interval.ms": 500,
                }
            )
        self.config = config

    def run(self) -> None:
        consumer = Consumer(self.config)

        def assigned(c: Consumer, partitions: list[Any]) -> None:
            self.ownership.take(self.name, [tp.partition for tp in partitions])

        def revoked(c: Consumer, partitions: list[Any]) -> None:
            self.ownership.give_up(self.name, [tp.partition for tp in partitions])

        consumer.subscribe([TOPIC], on_assign=assigned, on_revoke=revoked, on_lost=revoked)
        refused = False  # a commit racing a rebalance is refused, as Kafka refuses it: try again
        while not self.stopping.is_set():
            read = [m for m in consumer.consume(20, 0.1) if m.error() is None]
            with self.ownership.lock:
                self.ownership.seen.update(bytes(m.value() or b"").decode() for m in read)
            if read or refused:
                try:
                    consumer.commit(asynchronous=False)
                    refused = False
                except KafkaException as exc:
                    code = exc.args[0].code()
                    refused = code in RACING_A_REBALANCE
                    if code == KafkaError._NO_OFFSET:  # nothing of its own left to commit
                        continue
                    if not refused:
                        raise
                    self.ownership.refused_commits.append(f"{self.name}: {exc!r}")
        consumer.close()  # revokes (committing) and leaves


class KafkaPythonMember(Member):
    def run(self) -> None:
        consumer = KafkaConsumer(
            bootstrap_servers=self.bootstrap,
            group_id=self.group,
            **PYTHON_CLIENT_CONSUMER,
            partition_assignment_strategy=[RangePartitionAssignor],
        )
        member = self

        class Listener(ConsumerRebalanceListener):  # type: ignore[misc]
            def on_partitions_revoked(self, revoked: Any) -> None:
                member.ownership.give_up(member.name, [tp.partition for tp in revoked])

            def on_partitions_assigned(self, assigned: Any) -> None:
                member.ownership.take(member.name, [tp.partition for tp in assigned])

        # The topic's partitions known before the first join (kafka-python 3.0.12 strands a
        # leader that assigned before they were: tests/compat/test_kafka_python_join.py).
        subscribe(consumer, TOPIC, Listener())
        while not self.stopping.is_set():
            batches = consumer.poll(timeout_ms=100, max_records=20)
            for records in batches.values():
                with self.ownership.lock:
                    self.ownership.seen.update(r.value.decode() for r in records)
            if batches:
                consumer.commit()
        consumer.close()  # commits what it read, LeaveGroup
        self.ownership.give_up(self.name, list(range(PARTITIONS)))


class AiokafkaMember(Member):
    def run(self) -> None:
        asyncio.run(self._consume())

    async def _consume(self) -> None:
        consumer = AIOKafkaConsumer(
            bootstrap_servers=self.bootstrap,
            group_id=self.group,
            **PYTHON_CLIENT_CONSUMER,
            partition_assignment_strategy=(AIORangePartitionAssignor,),
        )
        member = self

        class Listener(AIOConsumerRebalanceListener):  # type: ignore[misc]
            async def on_partitions_revoked(self, revoked: Any) -> None:
                member.ownership.give_up(member.name, [tp.partition for tp in revoked])

            async def on_partitions_assigned(self, assigned: Any) -> None:
                member.ownership.take(member.name, [tp.partition for tp in assigned])

        await consumer.start()
        consumer.subscribe([TOPIC], listener=Listener())
        try:
            while not self.stopping.is_set():
                batches = await consumer.getmany(timeout_ms=100, max_records=20)
                for records in batches.values():
                    with self.ownership.lock:
                        self.ownership.seen.update(r.value.decode() for r in records)
                if batches:
                    await consumer.commit()
        finally:
            await consumer.stop()
        self.ownership.give_up(self.name, list(range(PARTITIONS)))


@pytest.fixture
def broker() -> Iterator[BrokerThread]:
    thread = BrokerThread(BrokerConfig(host="127.0.0.1", port=0))
    thread.broker.topics.create(TOPIC, PARTITIONS)
    thread.start()
    yield thread
    thread.stop()


class Producing:
    def __init__(self, bootstrap: str) -> None:
        self.producer = Producer({"bootstrap.servers": bootstrap})
        self.sent: set[str] = set()

    def send(self, count: int) -> None:
        for _ in range(count):
            value = str(len(self.sent))
            self.producer.produce(TOPIC, value=value.encode(), partition=len(self.sent) % PARTITIONS)
            self.sent.add(value)
        assert self.producer.flush(10) == 0


def committed_and_end(bootstrap: str, group: str) -> tuple[dict[int, int], dict[int, int]]:
    with WireClient(bootstrap) as wire:
        fetched = wire.request(
            9,
            5,
            {"group_id": group, "topics": [{"name": TOPIC, "partition_indexes": list(range(PARTITIONS))}]},
        )
        listed = wire.request(
            2,
            1,
            {
                "replica_id": -1,
                "topics": [
                    {
                        "name": TOPIC,
                        "partitions": [{"partition_index": p, "timestamp": -1} for p in range(PARTITIONS)],
                    }
                ],
            },
        )
    committed = {p.partition_index: p.committed_offset for p in fetched.topics[0].partitions}
    end = {p.partition_index: p.offset for p in listed.topics[0].partitions}
    return committed, end


def described(bootstrap: str, group: str) -> tuple[str, str, int]:
    """(protocol the broker runs the group with, its state, its member count)."""
    with WireClient(bootstrap) as wire:
        consumer = wire.request(69, 0, {"group_ids": [group]}).groups[0]
        if consumer.error_code == ErrorCode.NONE:
            return "consumer", consumer.group_state, len(consumer.members)
        assert consumer.error_code == ErrorCode.GROUP_ID_NOT_FOUND
        classic = wire.request(15, 5, {"groups": [group]}).groups[0]
        return "classic", classic.group_state, len(classic.members)


def settle(
    bootstrap: str, group: str, protocol: str, wanted: set[str], ownership: Ownership, producing: Producing
) -> None:
    """After a step: every partition owned by the members in `wanted`; the broker runs the
    group with `protocol`, Stable; everything sent since is read; the committed offsets did
    not go back; nobody took a partition another member held."""
    before = ownership.committed
    producing.send(RECORDS_PER_STEP)

    def done() -> bool:
        owners = ownership.owners()
        if len(owners) != PARTITIONS or set(owners.values()) != wanted:
            return False
        return described(bootstrap, group) == (protocol, "Stable", len(wanted))

    wait_for(f"{sorted(wanted)} own every partition, {protocol} group Stable", done, ownership)
    wait_for("everything sent was read", lambda: producing.sent <= ownership.seen, ownership)
    committed, _ = committed_and_end(bootstrap, group)
    moved_back = {p: (before[p], o) for p, o in committed.items() if o < before.get(p, -1)}
    assert not moved_back, f"committed offsets went back: {moved_back}"
    ownership.committed = committed
    assert not ownership.violations, ownership.violations


def all_committed(bootstrap: str, group: str, ownership: Ownership) -> None:
    """Before the members stop: what a refused commit left behind is committed again by the
    partition's owner (its retry, or the next owner's read)."""

    def caught_up() -> bool:
        committed, end = committed_and_end(bootstrap, group)
        return committed == end

    wait_for("every record read was committed", caught_up, ownership)


def wait_for(what: str, condition: Callable[[], bool], ownership: Ownership) -> None:
    deadline = time.monotonic() + STEP_DEADLINE_S
    while not condition():
        assert not ownership.errors, ownership.errors
        if time.monotonic() > deadline:
            raise AssertionError(f"not within {STEP_DEADLINE_S}s: {what}; owners {ownership.owners()}")
        time.sleep(0.05)


@pytest.mark.parametrize("classic_client", ["kafka-python", "confluent-kafka"])
def test_rolling_upgrade_and_downgrade_of_a_three_member_group(
    broker: BrokerThread, classic_client: str
) -> None:
    bootstrap = broker.bootstrap
    group = f"migration-{classic_client}-{uuid.uuid4().hex[:6]}"
    ownership = Ownership()
    producing = Producing(bootstrap)

    def classic(name: str) -> Member:
        if classic_client == "kafka-python":
            return KafkaPythonMember(name, ownership, bootstrap, group).start()
        return ConfluentMember(name, ownership, bootstrap, group, "classic").start()

    def upgraded(name: str) -> Member:
        return ConfluentMember(name, ownership, bootstrap, group, "consumer").start()

    def settled(protocol: str, members: dict[str, Member]) -> None:
        settle(bootstrap, group, protocol, set(members), ownership, producing)

    members: dict[str, Member] = {name: classic(name) for name in ("a", "b", "c")}
    try:
        settled("classic", members)
        for name in ("a", "b", "c"):  # classic -> consumer protocol, member by member
            members.pop(name).stop()
            members[f"{name}+"] = upgraded(f"{name}+")
            settled("consumer", members)
        for name in ("a", "b", "c"):  # and back
            members.pop(f"{name}+").stop()
            members[name] = classic(name)
            settled("consumer" if name != "c" else "classic", members)
        all_committed(bootstrap, group, ownership)
    finally:
        for member in members.values():
            member.stop()
    assert not ownership.errors, ownership.errors
    assert not ownership.violations, ownership.violations
    committed, end = committed_and_end(bootstrap, group)
    assert committed == end, "every record read was committed, and no commit was lost"


def test_classic_members_of_three_clients_with_a_consumer_protocol_member(broker: BrokerThread) -> None:
    """kafka-python, aiokafka and confluent-kafka classic members (range, the protocol they
    share); a confluent-kafka
    consumer-protocol member joins (the group upgrades, the classic ones stay) and leaves
    (the group is classic again)."""
    bootstrap = broker.bootstrap
    group = f"mixed-{uuid.uuid4().hex[:6]}"
    ownership = Ownership()
    producing = Producing(bootstrap)
    members: dict[str, Member] = {
        "kafka-python": KafkaPythonMember("kafka-python", ownership, bootstrap, group).start(),
        "aiokafka": AiokafkaMember("aiokafka", ownership, bootstrap, group).start(),
        "confluent": ConfluentMember("confluent", ownership, bootstrap, group, "classic", "range").start(),
    }
    try:
        for protocol, change in (("classic", None), ("consumer", "join"), ("classic", "leave")):
            if change == "join":
                members["kip848"] = ConfluentMember("kip848", ownership, bootstrap, group, "consumer").start()
            elif change == "leave":
                members.pop("kip848").stop()
            settle(bootstrap, group, protocol, set(members), ownership, producing)
        all_committed(bootstrap, group, ownership)
    finally:
        for member in members.values():
            member.stop()
    assert not ownership.errors, ownership.errors
    assert not ownership.violations, ownership.violations
    committed, end = committed_and_end(bootstrap, group)
    assert committed == end
