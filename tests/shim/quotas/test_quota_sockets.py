"""Quota enforcement over real sockets. KIP-219: a Produce over the client's quota is
answered at once with throttle_time_ms, and the broker then does not read the connection
for that long, so a request sent right behind it is answered only after the throttle time.
KIP-612: a connection over its IP's connection_creation_rate is closed without an answer."""

from __future__ import annotations

import time

import pytest

from kafka_shim.shim.config.broker_config import BrokerConfig
from kafka_shim.shim.quotas.client_quotas import CONNECTION_CREATION_RATE, PRODUCER_BYTE_RATE
from kafka_shim.shim.server import BrokerThread
from tests.batches import make_batch
from tests.wire import WireClient

QUOTA = 10_000.0
PRODUCE, API_VERSIONS = 0, 18


def test_the_connection_is_muted_for_the_throttle_time() -> None:
    broker = BrokerThread(BrokerConfig(host="127.0.0.1", port=0)).start()
    try:
        broker.call(lambda: broker.broker.topics.create("muted", 1))  # Produce creates no topic
        broker.call(
            lambda: broker.broker.client_quotas.store.alter(
                [([("client-id", "wire-test")], [(PRODUCER_BYTE_RATE, QUOTA)])], validate_only=False
            )
        )
        # 10.5 windows' worth over the first 10 s window: about 500 ms of throttle.
        batch = make_batch([b"m" * 105_000])
        produce = {
            "transactional_id": None,
            "acks": 1,
            "timeout_ms": 1000,
            "topic_data": [{"name": "muted", "partition_data": [{"index": 0, "records": batch}]}],
        }
        with WireClient(broker.bootstrap) as client:
            answered = client.request(PRODUCE, 9, produce)
            after_produce = time.monotonic()
            assert answered.responses[0].partition_responses[0].error_code == 0
            throttle_s = answered.throttle_time_ms / 1000
            assert throttle_s > 0.3
            client.request(API_VERSIONS, 3, {"client_software_name": "t", "client_software_version": "1"})
            assert time.monotonic() - after_produce >= throttle_s * 0.95
    finally:
        broker.stop()


def test_a_connection_over_its_ips_creation_rate_is_closed_unserved() -> None:
    # Two 1 s samples: the rate is counted over one window from the first connection.
    config = BrokerConfig(host="127.0.0.1", port=0, quota_window_num=2)
    broker = BrokerThread(config).start()
    hello = {"client_software_name": "t", "client_software_version": "1"}
    try:
        broker.call(
            lambda: broker.broker.client_quotas.store.alter(
                [([("ip", "127.0.0.1")], [(CONNECTION_CREATION_RATE, 5.0)])], validate_only=False
            )
        )
        admitted = [WireClient(broker.bootstrap) for _ in range(5)]
        for client in admitted:
            assert client.request(API_VERSIONS, 3, hello).error_code == 0
        with WireClient(broker.bootstrap) as sixth, pytest.raises(ConnectionError):
            sixth.request(API_VERSIONS, 3, hello)
        for client in admitted:
            client.close()
    finally:
        broker.stop()
