"""Produce then consume N 100-byte messages with confluent-kafka (client
defaults), kafka-shim beside Tansu in the same run (target: >= 0.8x Tansu).

    python -m bench.throughput [--messages 200000]
"""

from __future__ import annotations

import argparse
import time
import uuid
from collections.abc import Mapping
from statistics import median

from confluent_kafka import Consumer, Producer, TopicPartition

from bench.commits import create_topic
from bench.common import measure_interleaved, print_row
from compat.targets import Broker

PAYLOAD = b"x" * 100


def produce_and_consume(broker: Broker, count: int, client: Mapping[str, str] = {}) -> tuple[float, float]:
    """`client`: more librdkafka settings (security) for every client used."""
    topic = f"bench-tp-{uuid.uuid4().hex[:8]}"
    create_topic(broker.bootstrap, topic, 1, client)
    producer = Producer({"bootstrap.servers": broker.bootstrap, "acks": "all", **client})
    started = time.perf_counter()
    for _ in range(count):
        while True:
            try:
                producer.produce(topic, PAYLOAD)
                break
            except BufferError:  # local queue full: let deliveries drain
                producer.poll(0.01)
        producer.poll(0)
    if producer.flush(60) != 0:
        raise RuntimeError("producer did not deliver every message within 60 s")
    produce_rate = count / (time.perf_counter() - started)

    consumer = Consumer(
        {
            "bootstrap.servers": broker.bootstrap,
            "group.id": f"g-{topic}",
            "enable.auto.commit": False,
            **client,
        }
    )
    try:
        consumer.assign([TopicPartition(topic, 0, 0)])
        received = 0
        started = time.perf_counter()
        deadline = started + 120
        while received < count and time.perf_counter() < deadline:
            for message in consumer.consume(num_messages=10000, timeout=1.0):
                if message.error() is None:
                    received += 1
        consume_rate = received / (time.perf_counter() - started)
        if received != count:
            raise RuntimeError(f"consumed {received} of {count} messages")
    finally:
        consumer.close()
    return produce_rate, consume_rate


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=200_000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    samples = measure_interleaved(lambda b: produce_and_consume(b, args.messages), args.rounds)
    print_row(
        "produce 100-byte messages (median)",
        {k: median([r[0] for r in v]) for k, v in samples.items()},
        "msgs/s",
        True,
    )
    print_row(
        "consume 100-byte messages (median)",
        {k: median([r[1] for r in v]) for k, v in samples.items()},
        "msgs/s",
        True,
    )


if __name__ == "__main__":
    main()
