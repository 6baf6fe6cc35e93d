"""Feature levels with unmodified clients over real sockets: the Java Admin's describeFeatures
and updateFeatures, kafka-python's update_features, and Java transactional producers that
follow the finalized transaction.version: at 1 they run KIP-890's first protocol (the
producer epoch stays), at 2 its second (the epoch is bumped at every transaction end)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from kafka_shim.shim.config.broker_config import BrokerConfig
from kafka_shim.shim.server import BrokerThread
from tests.helpers import java_driver

pytestmark = pytest.mark.clients

TIMEOUT_S = 20
RECORDS = 30  # three transactions of ten (the driver's max.poll.records), the third aborted once


@pytest.fixture
def broker() -> Iterator[BrokerThread]:
    thread = BrokerThread(BrokerConfig(host="127.0.0.1", port=0, auto_create_topics=True)).start()
    yield thread
    thread.stop()


def transact(broker: BrokerThread, transactional_id: str) -> int:
    """Run the Java consume-transform-produce loop; the producer epoch it ends with."""
    events = java_driver(
        {
            "op": "transact",
            "bootstrap": broker.bootstrap,
            "topic": "in",
            "output": f"out-{transactional_id}",
            "group": f"g-{transactional_id}",
            "transactional_id": transactional_id,
            "count": RECORDS,
            "timeout_s": TIMEOUT_S,
        }
    )
    assert next(e for e in events if e["event"] == "transacted")["committed"] == RECORDS
    description = broker.call(lambda: broker.broker.transactions.describe(transactional_id))
    assert description is not None
    return description.producer_epoch


def test_java_admin_describes_and_updates_features(broker: BrokerThread) -> None:
    from confluent_kafka import Producer
    from kafka.admin import KafkaAdminClient

    events = java_driver(
        {
            "op": "features",
            "bootstrap": broker.bootstrap,
            "topic": "transaction.version",
            "count": 1,
            "timeout_s": TIMEOUT_S,
        }
    )
    steps = {e["step"]: (e["error"], e["result"]) for e in events if e["event"] == "feature_step"}
    error, described = steps["describe"]
    assert error is None and isinstance(described, dict)
    # Kafka 4.2's (the default --emulate, docs/emulation.md).
    assert described["supported"] == {
        "eligible.leader.replicas.version": [0, 1],
        "group.version": [0, 1],
        "kraft.version": [0, 1],
        "metadata.version": [7, 29],
        "share.version": [0, 1],
        "transaction.version": [0, 2],
    }
    assert described["finalized"] == {
        "eligible.leader.replicas.version": [1, 1],
        "group.version": [1, 1],
        "metadata.version": [29, 29],
        "share.version": [1, 1],
        "transaction.version": [2, 2],
    }
    assert steps["upgrade_to_lower"] == ("INVALID_UPDATE_VERSION", None)
    assert steps["validate_only"] == (None, None)
    assert steps["describe_unchanged"] == (None, described)
    assert steps["safe_downgrade"] == (None, None)
    _, changed = steps["describe_changed"]
    assert isinstance(changed, dict)
    assert changed["finalized"]["transaction.version"] == [1, 1]
    assert changed["epoch"] > described["epoch"]
    assert steps["unsupported_level"] == ("INVALID_UPDATE_VERSION", None)

    producer = Producer({"bootstrap.servers": broker.bootstrap})
    for i in range(RECORDS):
        producer.produce("in", f"v{i}".encode(), key=f"k{i}".encode())
    assert producer.flush(TIMEOUT_S) == 0
    # transaction.version 1: the epoch of a producer is bumped only by InitProducerId.
    assert transact(broker, "tv1") == 0

    admin = KafkaAdminClient(bootstrap_servers=broker.bootstrap)
    try:
        assert admin.update_features({"transaction.version": ("UPGRADE", 2)}) == {"transaction.version": "OK"}
        assert admin.describe_features()["transaction.version"]["finalized"] == (2, 2)
    finally:
        admin.close()
    # transaction.version 2: every commit and abort ends with a bumped epoch (3 commits, 1 abort).
    assert transact(broker, "tv2") >= 4
