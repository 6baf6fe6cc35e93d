"""KIP-219 over a real socket: a Produce over the client's quota is answered at once with
throttle_time_ms, and the broker then does not read the connection for that long, so a
request sent right behind it is answered only after the throttle time."""

from __future__ import annotations

import time

from kafka_shim.shim.client_quotas import PRODUCER_BYTE_RATE
from kafka_shim.shim.config import BrokerConfig
from kafka_shim.shim.server import BrokerThread
from tests.batches import make_batch
from tests.wire import WireClient

QUOTA = 10_000.0
PRODUCE, API_VERSIONS = 0, 18


def test_the_connection_is_muted_for_the_throttle_time() -> None:
    broker = BrokerThread(BrokerConfig(host="127.0.0.1", port=0, auto_create_topics=True)).start()
    try:
        broker.call(
            lambda: broker.broker.byte_rate_quotas.quotas.alter(
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
