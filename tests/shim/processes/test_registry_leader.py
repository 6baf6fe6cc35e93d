"""Where a broker process's schema registry keeps `_schemas` (shim.schema_registry.store with
Broker.local_node): created led by that process, on real files; one led by another broker is
refused with Confluent's 50001, not read from a log this process does not lead."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest

from kafka_shim.shim.broker import Broker
from kafka_shim.shim.config.broker_config import BrokerConfig
from kafka_shim.shim.schema_registry.errors import RegistryError
from kafka_shim.shim.schema_registry.records import CONFIG, Key, config_value
from kafka_shim.shim.schema_registry.store import SCHEMAS_TOPIC, SchemaStore

LEVEL = (Key(CONFIG).encode(), config_value(None, "FULL"))


@pytest.fixture
def broker(tmp_path: Path) -> Iterator[Broker]:
    """Broker 0 of two, as a process of --process-per-broker sees itself."""
    broker = Broker(BrokerConfig(data_dir=tmp_path / "data", brokers=2))
    broker.local_node = broker.config.node_id
    try:
        yield broker
    finally:
        broker.close()


def test_the_registry_creates_its_topic_led_by_its_own_process(broker: Broker) -> None:
    store = SchemaStore(broker)
    anyio.run(store.write, [LEVEL])
    topic = broker.topics.get(SCHEMAS_TOPIC)
    assert topic is not None and topic.replicas == [[broker.config.node_id, broker.config.node_id + 1]]
    assert broker.cluster.leader(SCHEMAS_TOPIC, 0) == broker.config.node_id
    assert SchemaStore(broker).catch_up().config(None) == "FULL"


def test_a_topic_led_by_another_process_is_refused(broker: Broker) -> None:
    other = broker.config.node_id + 1
    broker.topics.create(SCHEMAS_TOPIC, 1, {"cleanup.policy": "compact"}, assignment=[[other, 0]])
    with pytest.raises(RegistryError) as refused:
        SchemaStore(broker).catch_up()
    assert refused.value.error_code == 50001
    assert f"led by broker {other}" in refused.value.message
