"""Client quotas with unmodified clients over real sockets.

librdkafka (confluent-kafka) producing as fast as it can under a producer_byte_rate quota
is held to about that rate: the broker answers each Produce with throttle_time_ms and stops
reading the connection for that long; librdkafka reports the throttle (throttle_cb, stats).
A librdkafka consumer under consumer_byte_rate likewise (throttled fetches carry no data).
The quota is set with the Java Admin's alterClientQuotas and read back with
describeClientQuotas.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

import pytest

from kafka_shim.shim.config.broker_config import BrokerConfig
from kafka_shim.shim.quotas.client_quotas import CONSUMER_BYTE_RATE, PRODUCER_BYTE_RATE
from kafka_shim.shim.server import BrokerThread
from tests.helpers import java_driver

pytestmark = pytest.mark.clients

QUOTA = 200_000  # bytes per second
CLIENT_ID = "held-producer"
TIMEOUT_S = 10
SAMPLES = 3
RUN_S = 8.0


@pytest.fixture
def broker() -> Iterator[BrokerThread]:
    # Three 1 s samples (Kafka's default is 11): the first burst allowed before the rate is
    # measured over full windows is then 2 s worth, which keeps the measurement short.
    config = BrokerConfig(host="127.0.0.1", port=0, auto_create_topics=True, quota_window_num=SAMPLES)
    thread = BrokerThread(config).start()
    yield thread
    thread.stop()


def test_java_admin_sets_and_describes_quotas(broker: BrokerThread) -> None:
    events = java_driver(
        {
            "op": "quotas",
            "bootstrap": broker.bootstrap,
            "client_id": CLIENT_ID,
            "count": QUOTA,
            "timeout_s": TIMEOUT_S,
        }
    )
    steps = {e["step"]: (e["error"], e["result"]) for e in events if e["event"] == "quota_step"}
    assert steps["alter"] == (None, None)
    assert steps["describe"] == (None, {f"client-id={CLIENT_ID}": {PRODUCER_BYTE_RATE: float(QUOTA)}})
    assert steps["alter_invalid"] == ("INVALID_REQUEST", None)
    assert steps["describe_default_user"] == (None, {})
    found = broker.call(
        lambda: broker.broker.client_quotas.store.quota_for("ANONYMOUS", CLIENT_ID, PRODUCER_BYTE_RATE)
    )
    assert found == (float(QUOTA), ("", CLIENT_ID))


def test_librdkafka_producer_is_held_to_its_byte_rate(broker: BrokerThread) -> None:
    from confluent_kafka import Producer

    java_driver(
        {
            "op": "quotas",
            "bootstrap": broker.bootstrap,
            "client_id": CLIENT_ID,
            "count": QUOTA,
            "timeout_s": TIMEOUT_S,
        }
    )
    throttles: list[int] = []
    stats_throttle: list[float] = []
    acked: list[int] = []

    def on_delivery(err: object, msg: Any) -> None:
        if err is None:
            acked.append(len(msg.value()))

    def on_stats(text: str) -> None:
        for b in json.loads(text)["brokers"].values():
            if b["nodeid"] >= 0:
                stats_throttle.append(b["throttle"]["max"])

    producer = Producer(
        {
            "bootstrap.servers": broker.bootstrap,
            "client.id": CLIENT_ID,
            "linger.ms": 5,
            # Batches of a quarter second's worth (librdkafka's default is 1 MB, five seconds'
            # worth, which the broker admits and then throttles for five seconds at a time).
            "batch.size": QUOTA // 4,
            "queue.buffering.max.messages": 200,
            "throttle_cb": lambda event: throttles.append(event.throttle_time * 1000),
            "stats_cb": on_stats,
            "statistics.interval.ms": 500,
        }
    )
    value = b"v" * 10_000
    started = time.monotonic()
    while time.monotonic() - started < RUN_S:
        try:
            producer.produce("held", value, on_delivery=on_delivery)
        except BufferError:
            producer.poll(0.05)
        producer.poll(0)
    elapsed = time.monotonic() - started
    producer.purge()
    producer.flush(TIMEOUT_S)
    # Kafka's rate lets the first (samples - 1) windows' worth through at once.
    rate = (sum(acked) - (SAMPLES - 1) * QUOTA) / elapsed
    print(
        f"\nproducer_byte_rate={QUOTA} B/s: {sum(acked)} B acknowledged in {elapsed:.1f} s, "
        f"{rate:.0f} B/s beyond the first burst; {len(throttles)} throttle callbacks, "
        f"max {max(throttles, default=0):.0f} ms; stats throttle max {max(stats_throttle, default=0):.0f} ms"
    )
    assert throttles, "librdkafka saw no throttle_time_ms"
    assert 0.5 * QUOTA < rate < 1.5 * QUOTA


def test_librdkafka_consumer_is_held_to_its_byte_rate(broker: BrokerThread) -> None:
    from confluent_kafka import Consumer, Producer

    # Batches of a quarter second's worth: a fetch returns at least one whole batch (KIP-74), and
    # Kafka answers a fetch that alone goes over the quota without data, every time.
    producer = Producer({"bootstrap.servers": broker.bootstrap, "batch.size": QUOTA // 4})
    for _ in range(300):  # 3 MB: many times what the quota lets through in the run
        producer.produce("fetched", b"f" * 10_000)
    assert producer.flush(TIMEOUT_S) == 0
    # The quota is set on the default client id: each client id gets its own.
    found = broker.call(
        lambda: broker.broker.client_quotas.store.alter(
            [([("client-id", None)], [(CONSUMER_BYTE_RATE, float(QUOTA))])], validate_only=False
        )
    )
    assert found == [None]
    throttles: list[float] = []
    consumer = Consumer(
        {
            "bootstrap.servers": broker.bootstrap,
            "group.id": "held",
            "client.id": "held-consumer",
            "auto.offset.reset": "earliest",
            "max.partition.fetch.bytes": QUOTA // 4,
            "throttle_cb": lambda event: throttles.append(event.throttle_time * 1000),
        }
    )
    consumer.subscribe(["fetched"])
    consumed = 0
    first: float | None = None  # measured from the first record: joining the group takes a while
    deadline = time.monotonic() + TIMEOUT_S + RUN_S
    try:
        while time.monotonic() < deadline and (first is None or time.monotonic() - first < RUN_S):
            message = consumer.poll(0.1)
            if message is not None and message.error() is None:
                first = time.monotonic() if first is None else first
                consumed += len(message.value() or b"")
    finally:
        consumer.close()
    assert first is not None, "nothing consumed"
    elapsed = time.monotonic() - first
    rate = (consumed - (SAMPLES - 1) * QUOTA) / elapsed
    print(
        f"\nconsumer_byte_rate={QUOTA} B/s: {consumed} B consumed in {elapsed:.1f} s, {rate:.0f} B/s beyond "
        f"the first burst; {len(throttles)} throttle callbacks, max {max(throttles, default=0):.0f} ms"
    )
    assert throttles, "librdkafka saw no throttle_time_ms"
    assert 0.5 * QUOTA < rate < 1.5 * QUOTA
