"""Seconds from subscribe to the first message for a new consumer group with
confluent-kafka's defaults (session.timeout.ms 45 s), kafka-shim beside Tansu.
Apache Kafka with group.initial.rebalance.delay.ms=0 needs about 0.2 s.

    python -m bench.group_formation [--runs 3]
"""

from __future__ import annotations

import argparse
import time
import uuid
from statistics import median

from confluent_kafka import Consumer, Producer

from bench.commits import create_topic
from bench.common import measure_interleaved, print_row
from compat.targets import Broker


def seconds_to_first_message(
    broker: Broker, timeout_s: float = 60.0, group_protocol: str = "classic"
) -> float:
    """`group_protocol`: librdkafka's group.protocol, classic or consumer (KIP-848)."""
    topic = f"bench-group-{uuid.uuid4().hex[:8]}"
    create_topic(broker.bootstrap, topic, 3)
    producer = Producer({"bootstrap.servers": broker.bootstrap})
    for i in range(30):
        producer.produce(topic, key=str(i).encode(), value=b"v")
    if producer.flush(30) != 0:
        raise RuntimeError("could not produce the seed messages")
    consumer = Consumer(
        {
            "bootstrap.servers": broker.bootstrap,
            "group.id": f"g-{topic}",
            "auto.offset.reset": "earliest",
            "group.protocol": group_protocol,
        }
    )
    try:
        started = time.perf_counter()
        consumer.subscribe([topic])
        while time.perf_counter() - started < timeout_s:
            message = consumer.poll(0.05)
            if message is not None and message.error() is None:
                return time.perf_counter() - started
        raise RuntimeError(f"no message within {timeout_s} s")
    finally:
        consumer.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    samples = measure_interleaved(seconds_to_first_message, args.runs)
    print_row("subscribe -> first message (median)", {k: median(v) for k, v in samples.items()}, "s", False)


if __name__ == "__main__":
    main()
