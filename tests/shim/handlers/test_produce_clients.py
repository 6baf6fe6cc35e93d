"""Produce refusals as a real client sees them (librdkafka from the confluent-kafka wheel)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from confluent_kafka import KafkaError, Producer
from confluent_kafka.admin import AdminClient, NewTopic

from kafka_shim.shim.config.broker_config import BrokerConfig
from kafka_shim.shim.server import BrokerThread

pytestmark = pytest.mark.clients


@pytest.fixture
def bootstrap() -> Iterator[str]:
    broker = BrokerThread(BrokerConfig(host="127.0.0.1", port=0)).start()
    yield broker.bootstrap
    broker.stop()


def test_librdkafka_fails_keyless_records_of_a_compacted_topic_and_the_rest_of_their_batch(
    bootstrap: str,
) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic("compacted", 1, 1, config={"cleanup.policy": "compact"})])[
        "compacted"
    ].result(10)
    # One batch: a long linger and a single flush put all three records in it.
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 1000, "enable.idempotence": False})
    outcomes: dict[bytes, int] = {}

    def delivered(error: KafkaError | None, message: object) -> None:
        outcomes[message.value()] = error.code() if error else KafkaError.NO_ERROR  # type: ignore[attr-defined]

    for key, value in ((b"k0", b"keyed-0"), (None, b"keyless-1"), (b"k2", b"keyed-2"), (None, b"keyless-3")):
        producer.produce("compacted", value, key=key, on_delivery=delivered)
    assert producer.flush(15) == 0
    # As against Kafka: the keyless records fail with INVALID_RECORD, their batch mates with
    # librdkafka's own "failed because a different record in the batch was invalid". (With a
    # single record error librdkafka 2.16 gives every record the partition's INVALID_RECORD,
    # whatever the broker; its own test 0011 uses several keyless records, as this one does.)
    assert outcomes == {
        b"keyless-1": KafkaError.INVALID_RECORD,
        b"keyless-3": KafkaError.INVALID_RECORD,
        b"keyed-0": KafkaError._INVALID_DIFFERENT_RECORD,
        b"keyed-2": KafkaError._INVALID_DIFFERENT_RECORD,
    }
