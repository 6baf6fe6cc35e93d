"""Real consumers of many partitions over incremental fetch sessions (KIP-227), and with
sessions disabled (max.incremental.fetch.session.cache.slots=0): confluent-kafka
(librdkafka, which fetches without sessions) and kafka-python 3.0.12 with a partition added
later and a topic deleted while in the session, the Java client 4.x in a group. Every record
arrives exactly once; with sessions on, the broker holds the session of each client that
uses them and its epoch has advanced (it was used for incremental fetches)."""

from __future__ import annotations

import json
import subprocess
from collections import Counter
from collections.abc import Callable, Iterator
from typing import Protocol

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewPartitions
from kafka import KafkaConsumer
from kafka import TopicPartition as KafkaTopicPartition

from kafka_shim.shim.config.broker_config import BrokerConfig
from kafka_shim.shim.server import BrokerThread
from tests.helpers import wait_until

pytestmark = pytest.mark.clients

WIDE, DOOMED = "wide", "doomed"
PARTITIONS = 200
DEADLINE_S = 30.0
SLOTS = {"sessions": 1000, "no-sessions": 0}

Record = tuple[str, int, bytes]  # topic, partition, value


@pytest.fixture(params=list(SLOTS))
def broker(request: pytest.FixtureRequest) -> Iterator[BrokerThread]:
    config = BrokerConfig(
        host="127.0.0.1", port=0, max_incremental_fetch_session_cache_slots=SLOTS[request.param]
    )
    thread = BrokerThread(config)
    thread.broker.topics.create(WIDE, PARTITIONS)
    thread.broker.topics.create(DOOMED, 2)
    thread.start()
    yield thread
    thread.stop()


def sessions(thread: BrokerThread) -> list[tuple[int, int]]:
    """(next epoch, partitions) of every session the broker holds."""
    cache = thread.broker.fetch_sessions
    return thread.call(lambda: [(s.epoch, len(s.partitions)) for s in cache.sessions.values()])


def produce(bootstrap: str, records: list[Record]) -> None:
    # A new producer each time: it learns partitions added since from its first metadata.
    producer = Producer({"bootstrap.servers": bootstrap})
    for topic, partition, value in records:
        producer.produce(topic, value, key=value, partition=partition)  # the Java driver wants keys
    assert producer.flush(DEADLINE_S) == 0


class Client(Protocol):
    def assign(self, partitions: list[tuple[str, int]]) -> None: ...
    def poll(self) -> list[Record]: ...
    def close(self) -> None: ...


class Confluent:
    def __init__(self, bootstrap: str) -> None:
        self.consumer = Consumer(
            {
                "bootstrap.servers": bootstrap,
                "group.id": "sessions-confluent",
                "auto.offset.reset": "earliest",
                "enable.auto.commit": False,
            }
        )
        self.assigned: set[tuple[str, int]] = set()

    def assign(self, partitions: list[tuple[str, int]]) -> None:
        wanted = set(partitions)
        gone = [TopicPartition(t, p) for t, p in self.assigned - wanted]
        added = [TopicPartition(t, p, 0) for t, p in wanted - self.assigned]
        if gone:
            self.consumer.incremental_unassign(gone)
        if added:
            self.consumer.incremental_assign(added)
        self.assigned = wanted

    def poll(self) -> list[Record]:
        records = []
        for message in self.consumer.consume(1000, timeout=0.5):
            topic, partition, value = message.topic(), message.partition(), message.value()
            # Errors (the deleted topic's partitions) are not records.
            if message.error() is None and topic is not None and partition is not None and value is not None:
                records.append((topic, partition, value))
        return records

    def close(self) -> None:
        self.consumer.close()


class KafkaPython:
    def __init__(self, bootstrap: str) -> None:
        self.consumer = KafkaConsumer(
            bootstrap_servers=bootstrap, auto_offset_reset="earliest", enable_auto_commit=False
        )

    def assign(self, partitions: list[tuple[str, int]]) -> None:
        # Positions of partitions assigned before are kept (SubscriptionState.assign_from_user).
        self.consumer.assign([KafkaTopicPartition(t, p) for t, p in partitions])

    def poll(self) -> list[Record]:
        batches = self.consumer.poll(timeout_ms=500)
        return [(tp.topic, tp.partition, r.value) for tp, records in batches.items() for r in records]

    def close(self) -> None:
        self.consumer.close()


CLIENTS: dict[str, Callable[[str], Client]] = {"confluent-kafka": Confluent, "kafka-python": KafkaPython}
# librdkafka 2.16 sends every Fetch without a session (session id 0, epoch -1, as its
# source writes them): served in full, it must never leave a session behind.
USES_SESSIONS = {"confluent-kafka": False, "kafka-python": True}


class Received:
    def __init__(self, client: Client) -> None:
        self.client = client
        self.records: list[Record] = []

    def until(self, expected: list[Record]) -> None:
        def arrived() -> bool:
            self.records.extend(self.client.poll())
            return not Counter(expected) - Counter(self.records)

        wait_until(arrived, f"{len(expected)} records (have {len(self.records)})", deadline_s=DEADLINE_S)

    def polling_until(self, condition: Callable[[], bool], what: str) -> None:
        """Keep polling (kafka-python fetches only inside poll) until `condition`."""

        def polled() -> bool:
            self.records.extend(self.client.poll())
            return condition()

        wait_until(polled, what, deadline_s=DEADLINE_S)


def one_per_partition(topic: str, partitions: int, tag: str) -> list[Record]:
    return [(topic, p, f"{tag}-{topic}-{p}".encode()) for p in range(partitions)]


@pytest.mark.parametrize("client", CLIENTS)
def test_many_partitions_a_partition_added_and_a_topic_deleted(broker: BrokerThread, client: str) -> None:
    bootstrap = broker.bootstrap
    first = one_per_partition(WIDE, PARTITIONS, "first") + one_per_partition(DOOMED, 2, "first")
    produce(bootstrap, first)
    consumer = CLIENTS[client](bootstrap)
    received = Received(consumer)
    try:
        everything = [(WIDE, p) for p in range(PARTITIONS)] + [(DOOMED, 0), (DOOMED, 1)]
        consumer.assign(everything)
        received.until(first)
        if USES_SESSIONS[client] and broker.broker.config.max_incremental_fetch_session_cache_slots:
            received.polling_until(
                lambda: any(epoch > 2 and size == PARTITIONS + 2 for epoch, size in sessions(broker)),
                "an incremental session over every partition",
            )
        else:
            assert sessions(broker) == []

        # A partition added to the topic, then to the assignment (the session).
        admin = AdminClient({"bootstrap.servers": bootstrap})
        admin.create_partitions([NewPartitions(WIDE, PARTITIONS + 1)])[WIDE].result(DEADLINE_S)
        added = [(WIDE, PARTITIONS, b"added"), (WIDE, 7, b"second-wide-7")]
        produce(bootstrap, added)
        consumer.assign([*everything, (WIDE, PARTITIONS)])
        received.until(first + added)

        # A topic deleted while in the session: the others keep flowing.
        admin.delete_topics([DOOMED])[DOOMED].result(DEADLINE_S)
        after_delete = [(WIDE, 3, b"after-delete")]
        produce(bootstrap, after_delete)
        received.until(first + added + after_delete)
        consumer.assign([(WIDE, p) for p in range(PARTITIONS + 1)])
        last = [(WIDE, 4, b"last")]
        produce(bootstrap, last)
        received.until(first + added + after_delete + last)
    finally:
        consumer.close()
    assert sorted(received.records) == sorted(first + added + after_delete + last)  # each once


def test_java_group_consumer_of_many_partitions(broker: BrokerThread) -> None:
    from compat import java_build

    bootstrap = broker.bootstrap
    first = one_per_partition(WIDE, PARTITIONS, "first")
    second = one_per_partition(WIDE, PARTITIONS, "second")
    produce(bootstrap, first)
    command = {
        "op": "consume",
        "bootstrap": bootstrap,
        "topic": WIDE,
        "group": "sessions-java",
        "count": len(first) + len(second),
        "timeout_s": DEADLINE_S,
    }
    try:
        command_line = java_build.driver_command_line(json.dumps(command))
    except java_build.JavaDriverUnavailable as exc:
        raise AssertionError(f"the Java driver is needed (bash .ci/run builds it): {exc}") from exc
    java = subprocess.Popen(command_line, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert java.stdout is not None
        values = []
        events = (json.loads(line) for line in java.stdout)
        for event in events:
            if event["event"] == "message":
                values.append(event["value"].encode())
            if len(values) == len(first):
                break
        if broker.broker.config.max_incremental_fetch_session_cache_slots:
            wait_until(
                lambda: any(epoch > 2 and size == PARTITIONS for epoch, size in sessions(broker)),
                "the Java consumer's incremental session",
                deadline_s=DEADLINE_S,
            )
        else:
            assert sessions(broker) == []
        produce(bootstrap, second)  # arrives through the incremental session
        values += [event["value"].encode() for event in events if event["event"] == "message"]
        assert java.wait(timeout=DEADLINE_S) == 0, java.stderr.read() if java.stderr else ""
    finally:
        if java.poll() is None:
            java.kill()
            java.wait()
    assert sorted(values) == sorted(v for _, _, v in first + second)
