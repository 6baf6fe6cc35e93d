"""Synchronous offset commits per second from one confluent-kafka consumer,
kafka-shim beside Tansu in the same run (target: at least Tansu's).

    python -m bench.commits [--seconds 5]
"""

from __future__ import annotations

import argparse
import time
import uuid
from collections.abc import Mapping
from statistics import median

from confluent_kafka import Consumer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from bench.common import measure_interleaved, print_row
from compat.targets import Broker


def create_topic(bootstrap: str, topic: str, partitions: int, client: Mapping[str, str] = {}) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap, **client})
    for future in admin.create_topics([NewTopic(topic, partitions, 1)]).values():
        future.result(timeout=30)


def commits_per_second(broker: Broker, seconds: float, client: Mapping[str, str] = {}) -> float:
    """`client`: more librdkafka settings (security) for the consumer."""
    topic = f"bench-commits-{uuid.uuid4().hex[:8]}"
    create_topic(broker.bootstrap, topic, 1, client)
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
        offset = 0
        consumer.commit(offsets=[TopicPartition(topic, 0, offset)], asynchronous=False)  # warm-up
        started = time.perf_counter()
        while time.perf_counter() - started < seconds:
            offset += 1
            consumer.commit(offsets=[TopicPartition(topic, 0, offset)], asynchronous=False)
        elapsed = time.perf_counter() - started
        committed = consumer.committed([TopicPartition(topic, 0)], timeout=10)[0].offset
        if committed != offset:
            raise AssertionError(f"broker returned committed offset {committed}, expected {offset}")
        return offset / elapsed
    finally:
        consumer.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=2.0, help="length of one round")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    samples = measure_interleaved(lambda b: commits_per_second(b, args.seconds), args.rounds)
    print_row("synchronous commits/s (median)", {k: median(v) for k, v in samples.items()}, "commits/s", True)


if __name__ == "__main__":
    main()
