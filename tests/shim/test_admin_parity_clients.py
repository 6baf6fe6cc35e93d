"""Real clients calling the admin APIs a single Kafka 3.9 broker has beside the basic ones:
kafka-python 3.0.12's admin (AlterConfigs, DescribeLogDirs, DescribeTopicPartitions,
ElectLeaders, Alter/ListPartitionReassignments, AlterReplicaLogDirs), aiokafka's and
confluent-kafka's legacy `alter_configs`, confluent-kafka's `elect_leaders`, a librdkafka
consumer validating its position with OffsetForLeaderEpoch, and the Java Admin client and
consumer (compat/java/KafkaDriver.java, op `cluster_admin`), and a group whose offsets an admin
deleted."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from aiokafka.admin import AIOKafkaAdminClient
from aiokafka.admin.config_resource import ConfigResource as AioConfigResource
from aiokafka.admin.config_resource import ConfigResourceType as AioConfigResourceType
from confluent_kafka import (
    Consumer,
    ConsumerGroupState,
    ConsumerGroupTopicPartitions,
    ElectionType,
    KafkaError,
    Message,
    Producer,
)
from confluent_kafka import TopicPartition as RdTopicPartition
from confluent_kafka.admin import AdminClient
from confluent_kafka.admin import ConfigResource as RdConfigResource
from confluent_kafka.admin import ResourceType as RdResourceType
from kafka import KafkaProducer, TopicPartition
from kafka.admin import ConfigResource, ConfigResourceType, KafkaAdminClient
from kafka.errors import (
    InvalidReplicationAssignmentError,
    LogDirNotFoundError,
    NoError,
    NoReassignmentInProgressError,
)

from kafka_shim.shim.config.broker_config import BrokerConfig
from kafka_shim.shim.server import BrokerThread
from tests.helpers import java_driver

pytestmark = pytest.mark.clients

TIMEOUT_S = 20
OVERRIDES = {"retention.ms": "5000", "cleanup.policy": "compact"}


@pytest.fixture
def broker(tmp_path: Path) -> Iterator[BrokerThread]:
    thread = BrokerThread(BrokerConfig(host="127.0.0.1", port=0, data_dir=tmp_path / "data"))
    thread.broker.topics.create("t", 3, OVERRIDES)
    thread.start()
    yield thread
    thread.stop()


@pytest.fixture
def answered(caplog: pytest.LogCaptureFixture) -> Iterator[Callable[[str], bool]]:
    """Whether the broker has answered a request of an API (its request trace says)."""
    with caplog.at_level(logging.DEBUG, logger="kafka_shim.requests"):
        yield lambda api: any(r.getMessage().startswith(f"{api} v") for r in caplog.records)


def overrides(broker: BrokerThread) -> dict[str, str]:
    topic = broker.broker.topics.get("t")
    assert topic is not None
    return topic.configs


def log_dir(broker: BrokerThread) -> str:
    storage = broker.broker.storage
    assert storage is not None
    return storage.log_dir


def segment_bytes(broker: BrokerThread, partition: int) -> int:
    storage = broker.broker.storage
    assert storage is not None
    return sum(p.stat().st_size for p in storage.data_dir.partition_path("t", partition).glob("*.log"))


def test_kafka_python_admin(broker: BrokerThread, answered: Callable[[str], bool]) -> None:
    producer = KafkaProducer(bootstrap_servers=broker.bootstrap)
    for _ in range(10):
        producer.send("t", key=b"k", value=b"v" * 100, partition=0)
    producer.flush(TIMEOUT_S)
    producer.close()
    admin = KafkaAdminClient(bootstrap_servers=broker.bootstrap)
    try:
        # Legacy AlterConfigs: kafka-python first re-sends the other dynamic overrides it
        # finds through DescribeConfigs, since the API replaces the whole set.
        resource = ConfigResource(ConfigResourceType.TOPIC, "t", configs={"retention.ms": "7000"})
        assert admin.alter_configs([resource], incremental=False) == {"topic": {"t": "OK"}}
        assert overrides(broker) == {"retention.ms": "7000", "cleanup.policy": "compact"}
        assert answered("AlterConfigs")

        [described] = admin.describe_log_dirs()
        [directory] = described["log_dirs"]
        assert (directory["error_code"], directory["log_dir"]) == (0, log_dir(broker))
        sizes = {p["partition_index"]: p["partition_size"] for p in directory["topics"][0]["partitions"]}
        assert sizes == {0: segment_bytes(broker, 0), 1: 0, 2: 0}
        assert sizes[0] > 1000

        first = admin.describe_topic_partitions(["t"], response_partition_limit=2)
        assert [p["partition_index"] for p in first["topics"][0]["partitions"]] == [0, 1]
        assert first["next_cursor"] == {"topic_name": "t", "partition_index": 2}
        rest = admin.describe_topic_partitions(["t"], cursor=first["next_cursor"])
        assert [(p["partition_index"], p["leader_id"]) for p in rest["topics"][0]["partitions"]] == [(2, 0)]
        assert rest["next_cursor"] is None

        elected = admin.elect_leaders(0, {"t": [0]}, raise_errors=False)
        [result] = elected.replica_election_results[0].partition_result
        assert (result.partition_id, result.error_code) == (0, 84)  # ELECTION_NOT_NEEDED

        moved = admin.alter_partition_reassignments(
            {TopicPartition("t", 0): [0], TopicPartition("t", 1): [1], TopicPartition("t", 2): None}
        )
        assert moved == {
            TopicPartition("t", 0): None,
            TopicPartition("t", 1): InvalidReplicationAssignmentError,
            TopicPartition("t", 2): NoReassignmentInProgressError,
        }
        assert admin.list_partition_reassignments() == {}

        dirs = admin.alter_replica_log_dirs({("t", 0, 0): log_dir(broker), ("t", 1, 0): "/no/such/dir"})
        assert {(r.partition, error) for r, error in dirs.items()} == {(0, NoError), (1, LogDirNotFoundError)}
    finally:
        admin.close()


def test_aiokafka_alter_configs_replaces_the_overrides(
    broker: BrokerThread, answered: Callable[[str], bool]
) -> None:
    async def scenario() -> None:
        admin = AIOKafkaAdminClient(bootstrap_servers=broker.bootstrap)
        await admin.start()
        try:
            resource = AioConfigResource(AioConfigResourceType.TOPIC, "t", configs={"retention.ms": "7000"})
            [response] = await admin.alter_configs([resource])
            assert [r[0] for r in response.resources] == [0]
        finally:
            await admin.close()

    asyncio.run(scenario())
    assert overrides(broker) == {"retention.ms": "7000"}  # cleanup.policy is gone: a whole-set update
    assert answered("AlterConfigs")


def test_confluent_kafka_alter_configs_and_elect_leaders(broker: BrokerThread) -> None:
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    resource = RdConfigResource(RdResourceType.TOPIC, "t", set_config={"retention.ms": "7000"})
    with pytest.warns(DeprecationWarning):  # librdkafka's legacy AlterConfigs
        futures = admin.alter_configs([resource])
    assert [f.result(TIMEOUT_S) for f in futures.values()] == [None]
    assert overrides(broker) == {"retention.ms": "7000"}
    elected = admin.elect_leaders(ElectionType.PREFERRED, [RdTopicPartition("t", 0)]).result(TIMEOUT_S)
    assert [error.code() for error in elected.values()] == [KafkaError.ELECTION_NOT_NEEDED]


def produce_five(broker: BrokerThread) -> Producer:
    """v0..v4 into t-0, flushed; the producer, for more."""
    producer = Producer({"bootstrap.servers": broker.bootstrap})
    for i in range(5):
        producer.produce("t", key=b"k", value=b"v%d" % i, partition=0)
    assert producer.flush(TIMEOUT_S) == 0
    return producer


def first_message(consumer: Consumer, deadline: float) -> Message:
    """The first record the consumer polls (errors skipped) before the monotonic deadline."""
    while True:
        assert time.monotonic() < deadline, "no record after the validated position"
        polled = consumer.poll(0.5)
        if polled is not None and polled.error() is None:
            return polled


def test_librdkafka_validates_an_assigned_position_with_offset_for_leader_epoch(
    broker: BrokerThread, answered: Callable[[str], bool]
) -> None:
    produce_five(broker)
    consumer = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": "g", "enable.auto.commit": False})
    try:
        # A position with a leader epoch (as Metadata advertises it) is validated first.
        consumer.assign([RdTopicPartition("t", 0, 3, leader_epoch=0)])
        message = first_message(consumer, time.monotonic() + TIMEOUT_S)
        assert (message.offset(), message.value(), message.leader_epoch()) == (3, b"v3", 0)
    finally:
        consumer.close()
    assert answered("OffsetForLeaderEpoch")


def test_librdkafka_moves_a_position_past_the_epochs_end_back_to_it(
    broker: BrokerThread, answered: Callable[[str], bool]
) -> None:
    producer = produce_five(broker)
    config = {"bootstrap.servers": broker.bootstrap, "group.id": "g", "auto.offset.reset": "earliest"}
    consumer = Consumer(config | {"enable.auto.commit": False})
    try:
        # Offset 50 at epoch 0, which ends at 5: librdkafka takes 5 as its position (log
        # truncation), where an unvalidated fetch would be out of range and reset to 0.
        consumer.assign([RdTopicPartition("t", 0, 50, leader_epoch=0)])
        deadline = time.monotonic() + TIMEOUT_S
        while not answered("OffsetForLeaderEpoch"):
            assert time.monotonic() < deadline, "the position was never validated"
            consumer.poll(0.1)
        producer.produce("t", key=b"k", value=b"v5", partition=0)
        assert producer.flush(TIMEOUT_S) == 0
        message = first_message(consumer, deadline)
        assert (message.offset(), message.value()) == (5, b"v5")
    finally:
        consumer.close()


def test_java_admin_and_consumer(broker: BrokerThread, answered: Callable[[str], bool]) -> None:
    events = java_driver(
        {
            "op": "cluster_admin",
            "bootstrap": broker.bootstrap,
            "topic": "j",
            "partitions": 5,
            "group": "jg",
            "timeout_s": TIMEOUT_S,
        }
    )
    steps = {o["step"]: (o["error"], o["result"]) for o in events if o["event"] == "admin_step"}
    here = log_dir(broker)
    assert steps == {
        "create_topics": (None, None),
        "describe_topics": (None, {str(p): 0 for p in range(5)}),
        "describe_log_dirs": (None, [here]),
        "elect_leaders": (None, {"0": "ELECTION_NOT_NEEDED"}),
        "alter_reassignments": (None, None),
        "alter_reassignments_elsewhere": ("INVALID_REPLICA_ASSIGNMENT", None),
        "list_reassignments": (None, 0),
        "alter_replica_log_dirs": (None, None),
        "alter_replica_log_dirs_elsewhere": ("LOG_DIR_NOT_FOUND", None),
        "consume_committed": (None, "v1"),
    }
    for api in ("DescribeTopicPartitions", "DescribeLogDirs", "OffsetForLeaderEpoch"):
        assert answered(api), api


def test_a_group_whose_offsets_were_deleted_is_empty_then_deletable(broker: BrokerThread) -> None:
    """What `kafka-consumer-groups.sh --delete-offsets` then `--describe` and `--delete` see, as
    Kafka answers them: the group stays, Empty, until the retention check (its fake-clock test
    is in tests/shim/coordinator/test_offsets_admin.py); before, it was gone at once."""
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    offsets = ConsumerGroupTopicPartitions("tool-group", [RdTopicPartition("t", 0, 5)])
    admin.alter_consumer_group_offsets([offsets])["tool-group"].result(timeout=TIMEOUT_S)
    # confluent-kafka has no OffsetDelete; kafka-python's admin sends it.
    tool = KafkaAdminClient(bootstrap_servers=broker.bootstrap)
    assert tool.delete_group_offsets("tool-group", [TopicPartition("t", 0)]) == {
        TopicPartition("t", 0): NoError
    }
    tool.close()
    described = admin.describe_consumer_groups(["tool-group"])["tool-group"].result(timeout=TIMEOUT_S)
    assert (described.state, described.members) == (ConsumerGroupState.EMPTY, [])
    listed = admin.list_consumer_groups().result(timeout=TIMEOUT_S)
    assert "tool-group" in [g.group_id for g in listed.valid]
    admin.delete_consumer_groups(["tool-group"])["tool-group"].result(timeout=TIMEOUT_S)
    assert broker.broker.groups.group("tool-group") is None
