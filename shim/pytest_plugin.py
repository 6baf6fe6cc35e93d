"""pytest plugin: an in-process kafka-shim on a free port, no Docker needed.

    def test_my_consumer(kafka_shim):
        consumer = KafkaConsumer(bootstrap_servers=kafka_shim.bootstrap, ...)

`kafka_shim_factory(**overrides)` starts brokers with other settings, e.g.
`kafka_shim_factory(num_partitions=3, initial_rebalance_delay_ms=3000)`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import replace
from typing import Any

import pytest

from kafka_shim.shim.config import BrokerConfig
from kafka_shim.shim.server import BrokerThread


@pytest.fixture
def kafka_shim_factory() -> Iterator[Callable[..., BrokerThread]]:
    started: list[BrokerThread] = []

    def start(**overrides: Any) -> BrokerThread:
        config = replace(BrokerConfig(host="127.0.0.1", port=0), **overrides)
        broker = BrokerThread(config).start()
        started.append(broker)
        return broker

    yield start
    for broker in started:
        broker.stop()


@pytest.fixture
def kafka_shim(kafka_shim_factory: Callable[..., BrokerThread]) -> BrokerThread:
    """A running broker; `.bootstrap` is its "127.0.0.1:PORT"."""
    return kafka_shim_factory()
