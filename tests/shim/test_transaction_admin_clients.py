"""kafka-python 3.0.12's admin client against a partition holding a hanging transaction
(written through the storage layer): describe_producers reports it, abort_transaction
(WriteTxnMarkers) ends it, and a read_committed consumer then reads past it without
its records."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest
from kafka import KafkaConsumer, TopicPartition
from kafka.admin import AbortTransactionSpec, KafkaAdminClient
from kafka.errors import InvalidProducerEpochError

from kafka_shim.protocol.records import RecordBatches
from kafka_shim.shim.config.broker_config import BrokerConfig
from kafka_shim.shim.server import BrokerThread
from tests.batches import make_batch

pytestmark = pytest.mark.clients

TOPIC = "hanging"
HANGING, PLAIN = 700, 800
EPOCH = 3
NOW = 1_700_000_000_000
PARTITION = TopicPartition(TOPIC, 0)


@pytest.fixture
def broker() -> Iterator[BrokerThread]:
    thread = BrokerThread(BrokerConfig(host="127.0.0.1", port=0))
    log = thread.broker.topics.create(TOPIC, 1).partition(0)
    assert log is not None
    for producer_id, sequence, values, transactional in (
        (PLAIN, 0, [b"before"], False),
        (HANGING, 0, [b"h1", b"h2"], True),  # its coordinator never ends it
        (PLAIN, 1, [b"after"], False),
    ):
        batch = make_batch(
            values,
            producer_id=producer_id,
            producer_epoch=EPOCH,
            base_sequence=sequence,
            transactional=transactional,
            base_timestamp=NOW,
        )
        log.append(RecordBatches.parse(batch))
    thread.start()
    yield thread
    thread.stop()


def read_committed(bootstrap: str) -> tuple[list[bytes], int]:
    consumer = KafkaConsumer(
        bootstrap_servers=bootstrap, isolation_level="read_committed", enable_auto_commit=False
    )
    try:
        consumer.assign([PARTITION])
        consumer.seek(PARTITION, 0)
        seen: list[bytes] = []
        deadline = time.monotonic() + 20
        while b"after" not in seen:
            assert time.monotonic() < deadline, f"'after' never arrived; got {seen}"
            for records in consumer.poll(timeout_ms=500).values():
                seen.extend(record.value for record in records)
        return seen, consumer.end_offsets([PARTITION])[PARTITION]
    finally:
        consumer.close()


def test_describe_and_abort_a_hanging_transaction(broker: BrokerThread) -> None:
    admin = KafkaAdminClient(bootstrap_servers=broker.bootstrap)
    try:
        state = admin.describe_producers([PARTITION])[PARTITION]
        producers = {p.producer_id: p for p in state.active_producers}
        hanging = producers[HANGING]
        assert (hanging.producer_epoch, hanging.last_sequence, hanging.last_timestamp) == (EPOCH, 1, NOW + 1)
        assert (hanging.coordinator_epoch, hanging.current_transaction_start_offset) == (-1, 1)
        assert producers[PLAIN].current_transaction_start_offset == -1
        # A stale epoch is refused as Kafka refuses it.
        with pytest.raises(InvalidProducerEpochError):
            admin.abort_transaction(
                AbortTransactionSpec(PARTITION, HANGING, EPOCH - 1, hanging.coordinator_epoch)
            )
        admin.abort_transaction(AbortTransactionSpec(PARTITION, HANGING, EPOCH, hanging.coordinator_epoch))
        after = admin.describe_producers([PARTITION])[PARTITION]
        assert {p.producer_id: p.current_transaction_start_offset for p in after.active_producers} == {
            HANGING: -1,
            PLAIN: -1,
        }
    finally:
        admin.close()
    seen, end = read_committed(broker.bootstrap)
    assert seen == [b"before", b"after"]
    assert end == 5  # 4 records and the ABORT marker: the LSO is the log end again
