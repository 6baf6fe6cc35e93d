"""A topic set up to clean quickly, as librdkafka's 0077 compaction test sets it up (small
segments, min.cleanable.dirty.ratio=0.01), on a broker with a data directory: confluent-kafka
reads it back compacted within a few cleaner wakes (log.cleaner.backoff.ms, short here), as
Kafka's cleaner does within its 15 s; before, the cleaner ran only every
log.retention.check.interval.ms (5 min)."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from confluent_kafka import Consumer, KafkaError, Producer
from confluent_kafka.admin import AdminClient, NewTopic

from kafka_shim.shim.config.broker_config import BrokerConfig
from kafka_shim.shim.server import BrokerThread

pytestmark = pytest.mark.clients

DEADLINE_S = 20.0
KEYS = 4
PER_KEY = 10
FILLERS = 20


@pytest.fixture
def broker(tmp_path: Path) -> Iterator[BrokerThread]:
    config = BrokerConfig(host="127.0.0.1", port=0, data_dir=tmp_path / "data", log_cleaner_backoff_ms=200)
    thread = BrokerThread(config)
    thread.start()
    yield thread
    thread.stop()


def read_all(bootstrap: str, topic: str) -> list[tuple[bytes | None, bytes | None]]:
    """Every record of the topic from its start to its end as one consumer sees it now."""
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": f"read-{uuid.uuid4().hex[:8]}",
            "auto.offset.reset": "earliest",
            "enable.auto.commit": False,
            "enable.partition.eof": True,
        }
    )
    records: list[tuple[bytes | None, bytes | None]] = []
    try:
        consumer.subscribe([topic])
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            message = consumer.poll(0.2)
            if message is None:
                continue
            error = message.error()
            if error is not None:
                if error.code() == KafkaError._PARTITION_EOF:
                    return records
                raise AssertionError(error)
            records.append((message.key(), message.value()))
        raise AssertionError(f"the end of {topic} not reached within 10 s")
    finally:
        consumer.close()


def test_a_quickly_cleaned_topic_is_compacted_within_seconds(broker: BrokerThread) -> None:
    topic = f"compacted-{uuid.uuid4().hex[:8]}"
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    configs = {"cleanup.policy": "compact", "segment.bytes": "10000", "min.cleanable.dirty.ratio": "0.01"}
    admin.create_topics([NewTopic(topic, 1, 1, config=configs)])[topic].result(timeout=10)
    producer = Producer({"bootstrap.servers": broker.bootstrap, "linger.ms": 0, "batch.num.messages": 1})
    value = b"x" * 1000
    for i in range(PER_KEY):
        for k in range(KEYS):
            producer.produce(topic, key=b"k%d" % k, value=value + b"%d" % i)
        producer.flush(10)
    # As the test does: fill the segment so the keyed records are in closed segments.
    for i in range(FILLERS):
        producer.produce(topic, key=b"filler-%d" % i, value=b"f" * 1024)
    assert producer.flush(10) == 0
    expected = {(b"k%d" % k, value + b"%d" % (PER_KEY - 1)) for k in range(KEYS)}
    deadline = time.monotonic() + DEADLINE_S
    while True:
        records = read_all(broker.bootstrap, topic)
        keyed = [r for r in records if not r[0] or not r[0].startswith(b"filler")]
        if set(keyed) == expected and len(keyed) == KEYS:
            break
        assert time.monotonic() < deadline, f"not compacted within {DEADLINE_S}s: {len(records)} records"
    assert len(records) == KEYS + FILLERS
