"""Fixtures shared by the test broker's tests (test_control, test_faults_clients)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from kafka_shim.shim.config.broker_config import BrokerConfig
from kafka_shim.shim.server import BrokerThread


@pytest.fixture(scope="module")
def faults_broker_thread() -> Iterator[BrokerThread]:
    """An in-process broker with the control endpoint on a free port, recording requests."""
    config = BrokerConfig(host="127.0.0.1", port=0, control_listener="127.0.0.1:0", record_requests=1000)
    thread = BrokerThread(config).start()
    yield thread
    thread.stop()


@pytest.fixture
def faults_broker(faults_broker_thread: BrokerThread) -> Iterator[BrokerThread]:
    """The module's broker, its fault rules cleared after each test."""
    yield faults_broker_thread
    faults_broker_thread.clear_faults()
