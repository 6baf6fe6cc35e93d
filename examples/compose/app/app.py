"""The example stack's app: waits for the broker, writes three orders, reads them back in a
consumer group and commits, then prints `app: ok` (exit 0) or why not (exit 1)."""

import os
import sys
import time

from kafka import KafkaConsumer, KafkaProducer
from kafka.errors import KafkaError

BOOTSTRAP = os.environ["BOOTSTRAP_SERVERS"]
TOPIC = os.environ["TOPIC"]
ORDERS = [b"order-1", b"order-2", b"order-3"]


def connect_producer(deadline: float) -> KafkaProducer:
    while True:
        try:
            return KafkaProducer(bootstrap_servers=BOOTSTRAP)
        except KafkaError:  # the broker is not up yet
            if time.monotonic() > deadline:
                raise
            time.sleep(0.5)


def main() -> int:
    producer = connect_producer(time.monotonic() + 60)
    for order in ORDERS:
        producer.send(TOPIC, order).get(timeout=30)
    producer.close()
    consumer = KafkaConsumer(
        TOPIC,
        bootstrap_servers=BOOTSTRAP,
        group_id="billing",
        auto_offset_reset="earliest",
        enable_auto_commit=False,
        consumer_timeout_ms=20000,
    )
    seen = []
    for message in consumer:
        seen.append(message.value)
        if len(seen) == len(ORDERS):
            break
    consumer.commit()
    consumer.close()
    if sorted(seen) != ORDERS:
        print(f"app: read {seen}, expected {ORDERS}", flush=True)
        return 1
    print("app: ok", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
