"""Producing and inspecting test topics with confluent-kafka, outside Spark."""

from __future__ import annotations

import uuid
from collections.abc import Iterable

from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, NewTopic

Row = tuple[str, int, int, bytes | None, bytes | None]  # topic, partition, offset, key, value


def new_topic(bootstrap: str, partitions: int, prefix: str = "t") -> str:
    name = f"{prefix}-{uuid.uuid4().hex[:8]}"
    admin = AdminClient({"bootstrap.servers": bootstrap})  # kept alive until the future resolves
    admin.create_topics([NewTopic(name, partitions, 1)])[name].result(30)
    return name


def value_of(index: int) -> bytes:
    """100-byte values that say which record they are."""
    return f"{index:010d}".encode().ljust(100, b".")


def produce(
    bootstrap: str, topic: str, indexes: Iterable[int], partitions: int, headers: bool = False
) -> None:
    """Record i goes to partition i % partitions with key k<i> and value value_of(i)."""
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5, "enable.idempotence": True})
    for i in indexes:
        record_headers: list[tuple[str, str | bytes | None]] | None = (
            [("index", str(i).encode()), ("empty", None)] if headers else None
        )
        while True:
            try:
                producer.produce(
                    topic, value=value_of(i), key=b"k%d" % i, partition=i % partitions, headers=record_headers
                )
                break
            except BufferError:
                producer.poll(0.05)
        producer.poll(0)
    left = producer.flush(60)
    assert left == 0, f"{left} records not delivered"
