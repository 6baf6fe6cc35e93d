"""A large CreateTopics or DeleteTopics through confluent-kafka's AdminClient does not stall
other clients, the caps on partitions are refused as Kafka refuses its own, and what was
created is there after a restart.

"Does not stall" is shown without timing: the storage seam holds the thread making the
partitions halfway (FAULTS.hold), and while the CreateTopics is provably unanswered another
client's requests keep being answered, a fixed number of them. When the logs were made on
the event loop, the hold stopped the loop itself and the neighbour's first request was never
answered (its read timed out)."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from pathlib import Path

import pytest
from confluent_kafka import KafkaError, KafkaException
from confluent_kafka.admin import AdminClient, NewPartitions, NewTopic

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.protocol.messages.metadata import ZERO_UUID
from kafka_shim.shim.config.broker_config import BrokerConfig
from kafka_shim.shim.server import BrokerThread
from kafka_shim.storage.faults import FAULTS
from tests.wire import WireClient

pytestmark = pytest.mark.clients

TOPICS = 3
PER_TOPIC = 2_000
NEIGHBOUR_REQUESTS = 50  # answered while the admin request is held halfway
API_VERSIONS, METADATA = 18, 3
SOFTWARE = {"client_software_name": "neighbour", "client_software_version": "1"}


def start(data_dir: Path, **settings: int) -> BrokerThread:
    return BrokerThread(BrokerConfig(port=0, data_dir=data_dir, **settings)).start()  # type: ignore[arg-type]


def stop(broker: BrokerThread) -> None:
    broker.stop()
    broker.broker.close()


@pytest.fixture
def capped() -> Iterator[BrokerThread]:
    """A broker in memory with small caps: 100 new partitions a request, 150 in all."""
    running = BrokerThread(
        BrokerConfig(
            port=0, max_partitions_per_request=100, max_partitions=150, offsets_topic_num_partitions=1
        )
    ).start()
    yield running
    running.stop()


def admin_of(broker: BrokerThread) -> AdminClient:
    return AdminClient({"bootstrap.servers": broker.bootstrap, "socket.timeout.ms": 60_000})


def neighbour_is_served(broker: BrokerThread) -> None:
    """NEIGHBOUR_REQUESTS small requests on a connection of their own, each answered."""
    with WireClient(broker.bootstrap, timeout_s=10) as neighbour:
        for serial in range(NEIGHBOUR_REQUESTS):
            if serial % 2:
                answer = neighbour.request(API_VERSIONS, 3, SOFTWARE)
            else:
                answer = neighbour.request(METADATA, 12, {"topics": [], "allow_auto_topic_creation": False})
            assert getattr(answer, "error_code", 0) == 0


def error_of(future: object) -> KafkaError:
    with pytest.raises(KafkaException) as raised:
        future.result(timeout=60)  # type: ignore[attr-defined]
    error = raised.value.args[0]
    assert isinstance(error, KafkaError)
    return error


def test_a_large_create_and_delete_leave_other_clients_served_and_survive_a_restart(tmp_path: Path) -> None:
    names = [f"wide-{index}" for index in range(TOPICS)]
    broker = start(tmp_path)
    try:
        held = FAULTS.hold("partition", after=TOPICS * PER_TOPIC // 2)
        topics = [NewTopic(name, PER_TOPIC, 1) for name in names]
        admin = admin_of(broker)  # kept: a client collected at once would never send
        futures = admin.create_topics(topics, request_timeout=120)
        assert held.reached.wait(60), "the partitions were not being made"
        neighbour_is_served(broker)
        assert not any(future.done() for future in futures.values())  # still being made meanwhile
        held.release()
        for future in futures.values():
            future.result(timeout=120)
    finally:
        FAULTS.clear()  # a failed test never leaves a storage thread held
        stop(broker)

    restarted = start(tmp_path)
    try:
        admin = admin_of(restarted)
        listed = admin.list_topics(timeout=30).topics
        assert {name: len(listed[name].partitions) for name in names} == dict.fromkeys(names, PER_TOPIC)

        removing = FAULTS.hold("remove", after=PER_TOPIC)  # in the second topic's files
        for future in admin.delete_topics(names, request_timeout=60).values():
            future.result(timeout=60)  # answered once the catalog no longer holds them
        assert removing.reached.wait(60), "the deleted partitions' files were not being removed"
        neighbour_is_served(restarted)
        # Until its files are gone a name stays taken, as ZooKeeper-era Kafka answered.
        error = error_of(admin.create_topics([NewTopic(names[1], 1, 1)], request_timeout=30)[names[1]])
        assert error.code() == KafkaError.TOPIC_ALREADY_EXISTS
        assert "marked for deletion" in error.str()
        assert not set(names) & set(admin.list_topics(timeout=30).topics)
    finally:
        FAULTS.clear()
        stop(restarted)
        # The broker moved its 6,000 partitions' objects out of the collector's walks
        # (storage.topics.keep_out_of_collections); the rest of the session gets them back.
        gc.unfreeze()


def test_a_request_over_the_per_request_cap_is_refused_whole_as_kafka_refuses_it(
    capped: BrokerThread,
) -> None:
    admin = admin_of(capped)
    futures = admin.create_topics([NewTopic("a", 60, 1), NewTopic("b", 41, 1)], request_timeout=30)
    for future in futures.values():
        error = error_of(future)
        assert error.code() == KafkaError.POLICY_VIOLATION
        assert error.str().startswith("Excessively large number of partitions per request")
        assert "controller.max.records.per.batch=100" in error.str()
    assert not {"a", "b"} & set(admin.list_topics(timeout=30).topics)

    for future in admin.create_topics([NewTopic("a", 60, 1)], request_timeout=30).values():
        future.result(timeout=30)
    error = error_of(admin.create_partitions([NewPartitions("a", 161)], request_timeout=30)["a"])
    assert error.code() == KafkaError.POLICY_VIOLATION
    assert len(admin.list_topics(timeout=30).topics["a"].partitions) == 60


def test_partitions_past_max_partitions_are_refused_and_not_auto_created(capped: BrokerThread) -> None:
    admin = admin_of(capped)
    for future in admin.create_topics([NewTopic("big", 100, 1)], request_timeout=30).values():
        future.result(timeout=30)
    futures = admin.create_topics([NewTopic("fits", 40, 1), NewTopic("over", 20, 1)], request_timeout=30)
    futures["fits"].result(timeout=30)  # 140 of 150: the next topic is refused, alone
    error = error_of(futures["over"])
    assert error.code() == KafkaError.POLICY_VIOLATION
    assert "max.partitions=150" in error.str()
    error = error_of(admin.create_partitions([NewPartitions("fits", 51)], request_timeout=30)["fits"])
    assert error.code() == KafkaError.POLICY_VIOLATION
    for future in admin.create_topics([NewTopic("last", 10, 1)], request_timeout=30).values():
        future.result(timeout=30)  # exactly 150
    with WireClient(capped.bootstrap) as client:  # auto-creation finds no room: the topic is unknown
        body = {"topics": [{"name": "auto", "topic_id": ZERO_UUID}], "allow_auto_topic_creation": True}
        answer = client.request(METADATA, 12, body)
        assert answer.topics[0].error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    assert "auto" not in admin.list_topics(timeout=30).topics
