"""Kafka's listeners: parsing and refusals at start, and per-listener advertised addresses
over real sockets (Metadata, FindCoordinator, DescribeCluster; a real client follows them)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from dataclasses import replace

import pytest
from confluent_kafka import Consumer, Producer

from kafka_shim.shim.cli.main import build_parser, config_from_args
from kafka_shim.shim.config.broker_config import BrokerConfig, ConfigError
from kafka_shim.shim.config.listeners import Endpoint, parse_endpoints, parse_protocol_map, resolve
from kafka_shim.shim.server import BoundListener, BrokerThread
from tests.wire import WireClient

METADATA, FIND_COORDINATOR, DESCRIBE_CLUSTER = 3, 10, 60
PLAINTEXT_ONLY = "PLAINTEXT:PLAINTEXT,INSIDE:PLAINTEXT,OUTSIDE:PLAINTEXT"


def parse(*argv: str) -> BrokerConfig:
    return config_from_args(build_parser().parse_args(list(argv)))


def test_endpoints_parse_as_kafka_writes_them() -> None:
    assert parse_endpoints("plaintext://:9092, Docker://kafka-1:19092,V6://[::1]:0", "listeners") == (
        Endpoint("PLAINTEXT", "", 9092),
        Endpoint("DOCKER", "kafka-1", 19092),
        Endpoint("V6", "::1", 0),
    )
    assert str(Endpoint("V6", "::1", 0)) == "V6://[::1]:0"
    assert parse_protocol_map("inside:plaintext, SSL:SSL") == {"INSIDE": "PLAINTEXT", "SSL": "SSL"}


def test_resolve_pairs_each_listener_with_its_advertised_endpoint_and_protocol() -> None:
    inside, outside = resolve(
        "INSIDE://0.0.0.0:19092,OUTSIDE://:9092",
        "OUTSIDE://localhost:32768,INSIDE://kafka-shim:19092",
        PLAINTEXT_ONLY,
    )
    assert (inside.name, inside.protocol, inside.advertised) == (
        "INSIDE",
        "PLAINTEXT",
        Endpoint("INSIDE", "kafka-shim", 19092),
    )
    assert outside.advertised_address(9092) == ("localhost", 32768)
    (only,) = resolve("PLAINTEXT://127.0.0.1:0", None, "PLAINTEXT:PLAINTEXT")
    assert only.advertised_address(40000) == ("127.0.0.1", 40000)  # port 0: the bound port


def test_shorthands_are_one_plaintext_listener() -> None:
    config = parse("--host", "0.0.0.0", "--port", "0", "--advertised-host", "localhost")
    assert config.effective_listeners() == "PLAINTEXT://0.0.0.0:0"
    (listener,) = config.listener_endpoints()
    assert listener.advertised == Endpoint("PLAINTEXT", "localhost", 0)
    assert parse().effective_listeners() == "PLAINTEXT://127.0.0.1:9092"


def test_flags_and_config_keys_are_the_same_settings() -> None:
    by_flags = parse(
        "--listeners",
        "A://:0,B://:0",
        "--advertised-listeners",
        "A://a:1,B://b:2",
        "--config",
        "listener.security.protocol.map=A:PLAINTEXT,B:PLAINTEXT",
    )
    by_keys = parse(
        "--config",
        "listeners=A://:0,B://:0",
        "--config",
        "advertised.listeners=A://a:1,B://b:2",
        "--config",
        "listener.security.protocol.map=A:PLAINTEXT,B:PLAINTEXT",
    )
    assert by_flags.listener_endpoints() == by_keys.listener_endpoints()
    assert by_keys.kafka_value("advertised.listeners") == "A://a:1,B://b:2"


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--listeners", "PLAINTEXT://x"], "cannot parse 'PLAINTEXT://x' as NAME://host:port"),
        (["--listeners", "PLAINTEXT://:70000"], "70000 is not a TCP port"),
        (["--listeners", "PLAINTEXT://:1,plaintext://:2"], "different name; repeated: PLAINTEXT"),
        (["--listeners", "PLAINTEXT://a:9,B://b:9"], "different port; 9 repeated"),
        (["--listeners", ""], "at least one listener"),
        (
            ["--advertised-listeners", "OTHER://h:1"],
            "must be equal to or a subset of the ones defined in listeners",
        ),
        (
            ["--listeners", "PLAINTEXT://:0,B://:0", "--advertised-listeners", "PLAINTEXT://h:1"],
            "listener B is not in advertised.listeners",
        ),
        (["--host", "0.0.0.0"], "cannot use the nonroutable meta-address 0.0.0.0"),
        (["--listeners", "PLAINTEXT://[::]:0"], "nonroutable meta-address ::"),
        (["--listeners", "INSIDE://:0"], "no security protocol defined for listener INSIDE"),
        (["--listeners", "SSL://:0"], "listener SSL uses TLS: set ssl.keystore.location"),
        (
            ["--listeners", "S://:0", "--config", "listener.security.protocol.map=S:SASL_SSL"],
            "listener S uses TLS: set ssl.keystore.location",
        ),
        (["--config", "listener.security.protocol.map=PLAINTEXT"], "should be of form NAME:PROTOCOL"),
        (["--config", "listener.security.protocol.map=PLAINTEXT:TLS"], "unknown security protocol 'TLS'"),
        (["--port", "0", "--listeners", "PLAINTEXT://:0"], "--port and listeners both say where to listen"),
        (["--advertised-host", "h", "--advertised-listeners", "PLAINTEXT://h:1"], "use one"),
        (["--advertised-host", "h", "--config", "listeners=PLAINTEXT://:0"], "set advertised.listeners"),
    ],
)
def test_bad_or_conflicting_listener_specs_are_refused(argv: list[str], message: str) -> None:
    with pytest.raises(ConfigError) as refused:
        parse(*argv)
    assert message in str(refused.value)


@pytest.fixture
def two_listeners() -> Iterator[BrokerThread]:
    """INSIDE advertises a name only a container network would resolve; OUTSIDE its bound port."""
    config = replace(
        BrokerConfig(),
        listeners="INSIDE://127.0.0.1:0,OUTSIDE://127.0.0.1:0",
        advertised_listeners="INSIDE://kafka-shim.internal:19092,OUTSIDE://127.0.0.1:0",
        listener_security_protocol_map=PLAINTEXT_ONLY,
        num_partitions=1,
    )
    broker = BrokerThread(config).start()
    yield broker
    broker.stop()


def _bootstrap(listener: BoundListener) -> str:
    return f"{listener.bound[0]}:{listener.bound[1]}"


def _advertised_per_api(bootstrap: str) -> set[tuple[str, int]]:
    with WireClient(bootstrap) as client:
        metadata = client.request(METADATA, 12, {"topics": [], "allow_auto_topic_creation": False})
        coordinator = client.request(FIND_COORDINATOR, 4, {"key_type": 0, "coordinator_keys": ["g"]})
        cluster = client.request(DESCRIBE_CLUSTER, 1, {"include_cluster_authorized_operations": False})
    return {
        (metadata.brokers[0].host, metadata.brokers[0].port),
        (coordinator.coordinators[0].host, coordinator.coordinators[0].port),
        (cluster.brokers[0].host, cluster.brokers[0].port),
    }


def test_each_listener_advertises_its_own_address(two_listeners: BrokerThread) -> None:
    inside, outside = two_listeners.listeners
    assert _advertised_per_api(_bootstrap(inside)) == {("kafka-shim.internal", 19092)}
    assert _advertised_per_api(_bootstrap(outside)) == {outside.bound}
    assert two_listeners.bootstrap == "kafka-shim.internal:19092"  # the first listener's


def test_a_real_client_on_one_listener_follows_that_listeners_address(two_listeners: BrokerThread) -> None:
    """librdkafka reconnects to the advertised broker address after its first Metadata: on
    OUTSIDE that is the bound port; were it INSIDE's name, nothing would be delivered."""
    bootstrap = _bootstrap(two_listeners.listeners[1])
    topic = f"listeners-{uuid.uuid4().hex[:8]}"
    producer = Producer({"bootstrap.servers": bootstrap, "message.timeout.ms": 10000})
    delivered: list[object] = []
    producer.produce(topic, b"through OUTSIDE", on_delivery=lambda err, msg: delivered.append(err or msg))
    assert producer.flush(15) == 0
    assert delivered and not isinstance(delivered[0], Exception), delivered
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": topic, "auto.offset.reset": "earliest"})
    try:
        consumer.subscribe([topic])
        message = consumer.poll(15)
        assert message is not None and message.error() is None, message and message.error()
        assert message.value() == b"through OUTSIDE"
    finally:
        consumer.close()
