"""Clients that speak the pre-0.11 protocol, end to end over a real socket: kafka-python
3.0.12 forced to api_version (0, 10) / (0, 9) produces magic 1 / magic 0 message sets
(Produce v2 / v1) and consumes in a group through Fetch v2 / v1 and ListOffsets v0;
librdkafka (confluent-kafka) with `broker.version.fallback=0.9.0` does the same with every
codec, magic 0 LZ4 with Kafka 0.8's frame checksum included. Against a broker emulating Kafka
3.9: Kafka 4 removed these versions (KIP-896)."""

from __future__ import annotations

import time
from collections.abc import Callable

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition
from kafka import KafkaConsumer, KafkaProducer

from kafka_shim.protocol.record_codec import CODEC_NAMES, decode_batches
from kafka_shim.pytest_plugin import KafkaShim

pytestmark = pytest.mark.clients

DEADLINE_S = 20


@pytest.fixture
def kafka_shim(kafka_shim_factory: Callable[..., KafkaShim]) -> KafkaShim:
    return kafka_shim_factory(emulate="3.9")


def stored(kafka_shim: KafkaShim, topic: str) -> list[tuple[int, int, int, bytes | None, bytes | None]]:
    """(magic, codec, timestamp, key, value) of every record as the broker stored it."""
    log = kafka_shim.broker.topics.partition(topic, 0)
    assert log is not None
    return [
        (decoded.header.magic, decoded.header.compression, r.timestamp, r.key, r.value)
        for decoded in decode_batches(log.read(0, 1 << 24))
        for r in decoded.records
    ]


@pytest.mark.parametrize(("api_version", "magic"), [((0, 10), 1), ((0, 9), 0)])
@pytest.mark.parametrize("compression", [None, "gzip"])
def test_kafka_python_old_protocol_round_trip_in_a_group(
    kafka_shim: KafkaShim, api_version: tuple[int, int], magic: int, compression: str | None
) -> None:
    topic = f"old-{magic}-{compression}"
    producer = KafkaProducer(
        bootstrap_servers=kafka_shim.bootstrap, api_version=api_version, compression_type=compression
    )
    sent = [producer.send(topic, key=b"k%d" % i, value=b"v%d" % i, timestamp_ms=1_000 + i) for i in range(5)]
    metadata = [future.get(DEADLINE_S) for future in sent]
    producer.close()
    assert [m.offset for m in metadata] == [0, 1, 2, 3, 4]
    timestamps = [1_000 + i for i in range(5)] if magic == 1 else [-1] * 5
    codec = 1 if compression == "gzip" else 0
    assert {(m, c) for m, c, *_ in stored(kafka_shim, topic)} == {(2, codec)}
    assert [(t, k, v) for *_, t, k, v in stored(kafka_shim, topic)] == [
        (t, b"k%d" % i, b"v%d" % i) for i, t in enumerate(timestamps)
    ]

    consumer = KafkaConsumer(
        topic,
        bootstrap_servers=kafka_shim.bootstrap,
        api_version=api_version,
        group_id=f"group-{topic}",
        auto_offset_reset="earliest",
        consumer_timeout_ms=DEADLINE_S * 1000,
    )
    received = []
    for message in consumer:
        received.append((message.offset, message.timestamp, message.key, message.value))
        if len(received) == 5:
            break
    consumer.commit()
    consumer.close()
    expected_time = [1_000 + i for i in range(5)] if magic == 1 else [None] * 5
    assert received == [(i, expected_time[i], b"k%d" % i, b"v%d" % i) for i in range(5)]
    assert kafka_shim.committed(f"group-{topic}") == {(topic, 0): 5}


@pytest.mark.parametrize("codec", ["none", "gzip", "snappy", "lz4"])
def test_librdkafka_magic_0_every_codec_round_trip(kafka_shim: KafkaShim, codec: str) -> None:
    topic = f"rd-{codec}"
    kafka_shim.create_topic(topic, 1)
    old = {"bootstrap.servers": kafka_shim.bootstrap, "api.version.request": False, "log_level": 3}
    old["broker.version.fallback"] = "0.9.0"
    producer = Producer(old | {"compression.codec": codec, "linger.ms": 100})
    values = [b"value-%d " % i * 20 for i in range(5)]  # compressible, so librdkafka compresses
    for i, value in enumerate(values):
        producer.produce(topic, key=b"k%d" % i, value=value)
    assert producer.flush(DEADLINE_S) == 0
    assert {CODEC_NAMES[c] for _, c, *_ in stored(kafka_shim, topic)} == {codec}
    assert [(t, k, v) for *_, t, k, v in stored(kafka_shim, topic)] == [
        (-1, b"k%d" % i, v) for i, v in enumerate(values)
    ]

    consumer = Consumer(old | {"group.id": f"g-{topic}", "enable.auto.commit": False})
    consumer.assign([TopicPartition(topic, 0, 0)])
    received: list[tuple[int | None, bytes | None, bytes | None]] = []
    deadline = time.monotonic() + DEADLINE_S
    while len(received) < 5 and time.monotonic() < deadline:
        message = consumer.poll(0.5)
        if message is None:
            continue
        assert message.error() is None, message.error()
        received.append((message.offset(), message.key(), message.value()))
    consumer.close()
    assert received == [(i, b"k%d" % i, v) for i, v in enumerate(values)]
