"""Real consumers (confluent-kafka / librdkafka, kafka-python 3.0.12, aiokafka) against a broker
whose partition holds committed, aborted and still-open transactions written through
the storage layer (transactional batches and COMMIT/ABORT markers): with
isolation.level=read_committed they see only committed records and stop at the last
stable offset; with read_uncommitted they see everything."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterator

import pytest
from aiokafka import AIOKafkaConsumer
from aiokafka import TopicPartition as AIOTopicPartition
from confluent_kafka import Consumer, TopicPartition
from kafka import KafkaConsumer
from kafka import TopicPartition as KafkaTopicPartition

from kafka_shim.protocol.records import RecordBatches
from kafka_shim.shim.config.broker_config import BrokerConfig
from kafka_shim.shim.server import BrokerThread
from kafka_shim.storage.log import PartitionLog
from tests.batches import make_batch

pytestmark = pytest.mark.clients

TOPIC = "txn-out"
COMMITTED, ABORTED, OPEN, PLAIN = 100, 200, 300, 400  # producer ids
NOW = 1_700_000_000_000
DEADLINE_S = 20.0


class Writer:
    def __init__(self, log: PartitionLog) -> None:
        self.log = log
        self.sequences: dict[int, int] = {}

    def data(self, producer_id: int, *values: bytes, transactional: bool = True) -> None:
        sequence = self.sequences.get(producer_id, 0)
        batch = make_batch(
            list(values),
            producer_id=producer_id,
            producer_epoch=0,
            base_sequence=sequence,
            transactional=transactional,
            base_timestamp=NOW,
        )
        self.log.append(RecordBatches.parse(batch))
        self.sequences[producer_id] = sequence + len(values)

    def end(self, producer_id: int, commit: bool) -> None:
        self.log.write_txn_marker(producer_id, 0, commit, 0, NOW)


def fill(log: PartitionLog) -> None:
    w = Writer(log)
    w.data(COMMITTED, b"c1", b"c2")
    w.data(ABORTED, b"a1")
    w.data(COMMITTED, b"c3")
    w.data(PLAIN, b"p1", transactional=False)
    w.data(ABORTED, b"a2", b"a3")
    w.end(ABORTED, commit=False)
    w.end(COMMITTED, commit=True)
    w.data(ABORTED, b"a4")  # the aborting producer's next transaction commits
    w.end(ABORTED, commit=True)
    w.data(COMMITTED, b"x1")
    w.end(COMMITTED, commit=False)
    w.data(PLAIN, b"p2", transactional=False)
    w.data(OPEN, b"o1")  # still open: the LSO stops here
    w.data(PLAIN, b"p3", transactional=False)


ALL = [b"c1", b"c2", b"a1", b"c3", b"p1", b"a2", b"a3", b"a4", b"x1", b"p2", b"o1", b"p3"]
VISIBLE = [b"c1", b"c2", b"c3", b"p1", b"a4", b"p2"]


@pytest.fixture
def broker() -> Iterator[BrokerThread]:
    thread = BrokerThread(BrokerConfig(host="127.0.0.1", port=0))
    topic = thread.broker.topics.create(TOPIC, 1)
    log = topic.partition(0)
    assert log is not None
    fill(log)  # before the server runs: appends from this thread need no wake-ups
    thread.start()
    yield thread
    thread.stop()


def consume_until(poll: Callable[[], list[bytes]], last: bytes) -> list[bytes]:
    """Values in delivery order until `last` arrives. A partition is delivered in offset
    order, so anything that should not have been served before it is in the list."""
    seen: list[bytes] = []
    deadline = time.monotonic() + DEADLINE_S
    while last not in seen:
        assert time.monotonic() < deadline, f"{last!r} never arrived; got {seen}"
        seen.extend(poll())
    return seen


def confluent(bootstrap: str, isolation: str) -> tuple[list[bytes], int]:
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": f"rc-{isolation}",
            "isolation.level": isolation,
            "auto.offset.reset": "earliest",
            "enable.auto.commit": False,
        }
    )
    try:
        consumer.assign([TopicPartition(TOPIC, 0, 0)])

        def poll() -> list[bytes]:
            message = consumer.poll(0.5)
            if message is None or message.error() is not None:
                return []
            value = message.value()
            return [value] if value is not None else []

        seen = consume_until(poll, VISIBLE[-1] if isolation == "read_committed" else ALL[-1])
        _, high = consumer.get_watermark_offsets(TopicPartition(TOPIC, 0), timeout=5.0, cached=False)
        return seen, high
    finally:
        consumer.close()


def kafka_python(bootstrap: str, isolation: str) -> tuple[list[bytes], int]:
    consumer = KafkaConsumer(
        bootstrap_servers=bootstrap,
        isolation_level=isolation,
        auto_offset_reset="earliest",
        enable_auto_commit=False,
        consumer_timeout_ms=500,
    )
    try:
        partition = KafkaTopicPartition(TOPIC, 0)
        consumer.assign([partition])
        consumer.seek(partition, 0)

        def poll() -> list[bytes]:
            batches = consumer.poll(timeout_ms=500)
            return [record.value for records in batches.values() for record in records]

        seen = consume_until(poll, VISIBLE[-1] if isolation == "read_committed" else ALL[-1])
        # end_offsets asks ListOffsets(latest) at the consumer's isolation level.
        return seen, consumer.end_offsets([partition])[partition]
    finally:
        consumer.close()


def aiokafka(bootstrap: str, isolation: str) -> tuple[list[bytes], int]:
    async def run() -> tuple[list[bytes], int]:
        consumer = AIOKafkaConsumer(
            bootstrap_servers=bootstrap, isolation_level=isolation, enable_auto_commit=False
        )
        await consumer.start()
        try:
            partition = AIOTopicPartition(TOPIC, 0)
            consumer.assign([partition])
            consumer.seek(partition, 0)
            last = VISIBLE[-1] if isolation == "read_committed" else ALL[-1]
            seen: list[bytes] = []
            deadline = time.monotonic() + DEADLINE_S
            while last not in seen:
                assert time.monotonic() < deadline, f"{last!r} never arrived; got {seen}"
                batches = await consumer.getmany(timeout_ms=500)
                seen.extend(record.value for records in batches.values() for record in records)
            # end_offsets asks ListOffsets(latest) at the consumer's isolation level.
            return seen, (await consumer.end_offsets([partition]))[partition]
        finally:
            await consumer.stop()

    return asyncio.run(run())


CLIENTS = {"confluent-kafka": confluent, "kafka-python": kafka_python, "aiokafka": aiokafka}


@pytest.mark.parametrize("client", CLIENTS)
def test_read_committed_sees_only_committed_records(broker: BrokerThread, client: str) -> None:
    seen, end = CLIENTS[client](broker.bootstrap, "read_committed")
    assert seen == VISIBLE
    log = broker.broker.topics.partition(TOPIC, 0)
    assert log is not None
    assert end == log.last_stable_offset < log.high_watermark


@pytest.mark.parametrize("client", CLIENTS)
def test_read_uncommitted_sees_aborted_and_open_records(broker: BrokerThread, client: str) -> None:
    seen, end = CLIENTS[client](broker.bootstrap, "read_uncommitted")
    assert seen == ALL
    log = broker.broker.topics.partition(TOPIC, 0)
    assert log is not None
    assert end == log.high_watermark
