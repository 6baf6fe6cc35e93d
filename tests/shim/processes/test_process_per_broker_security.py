"""`--brokers 2 --process-per-broker` with secured listeners, as one process serves them: named
listeners mapped to SASL_PLAINTEXT, SSL and SASL_SSL by listener.security.protocol.map, users
from --user, the dev CA's certificate presented by both processes. Real clients produce and
consume through both processes on each listener; a wrong password is refused by each process
as one process refuses it; each process advertises every broker's own address per listener."""

from __future__ import annotations

import re
import ssl
import sys
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from compat.targets import RunningBroker, launch
from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.shim.security.dev_certs import DEFAULT_HOSTS, write_dev_certs
from tests.wire import WireClient

pytestmark = pytest.mark.clients

FIND_COORDINATOR, METADATA, SASL_HANDSHAKE, SASL_AUTHENTICATE = 10, 3, 17, 36
USER, PASSWORD = "alice", "alice-pw"
# listener name -> security protocol (listener.security.protocol.map), none of them PLAINTEXT
PROTOCOLS = {"CLIENT": "SASL_PLAINTEXT", "SECURE": "SSL", "BOTH": "SASL_SSL"}


@dataclass(frozen=True)
class Cluster:
    broker: RunningBroker
    addresses: dict[str, list[str]]  # listener name -> host:port of broker 0, broker 1
    ca: Path


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    root = tmp_path_factory.mktemp("secured")
    certs = write_dev_certs(root / "certs", DEFAULT_HOSTS, "client", 2)
    listeners = ",".join(f"{name}://127.0.0.1:0" for name in PROTOCOLS)
    protocol_map = ",".join(f"{name}:{protocol}" for name, protocol in PROTOCOLS.items())
    argv = [sys.executable, "-m", "kafka_shim", "--brokers", "2", "--process-per-broker"]
    argv += ["--listeners", listeners, "--config", f"listener.security.protocol.map={protocol_map}"]
    argv += ["--config", f"ssl.keystore.location={certs['broker']}", "--user", f"{USER}:{PASSWORD}"]
    argv += ["--data-dir", str(root / "data"), "--console", "off", "--log-level", "WARNING"]
    argv += ["--initial-rebalance-delay-ms", "0"]
    broker = launch("shim", argv, timeout_s=60)
    try:
        line = next(line for line in broker.output if "listening on" in line)
        addresses: dict[str, list[str]] = {name: [] for name in PROTOCOLS}
        for address, name, _ in re.findall(r"(127\.0\.0\.1:\d+) \((\w+), broker (\d)\)", line):
            addresses[name].append(address)
        assert all(len(each) == 2 for each in addresses.values()), line
        yield Cluster(broker, addresses, certs["ca"])
    finally:
        broker.stop()


def client_config(cluster: Cluster, listener: str, password: str = PASSWORD) -> dict[str, Any]:
    """librdkafka's settings for `listener`: SCRAM-SHA-256 where it is SASL, the dev CA where TLS."""
    protocol = PROTOCOLS[listener]
    config: dict[str, Any] = {
        "bootstrap.servers": ",".join(cluster.addresses[listener]),
        "security.protocol": protocol.lower(),
    }
    if "SASL" in protocol:
        config |= {"sasl.mechanism": "SCRAM-SHA-256", "sasl.username": USER, "sasl.password": password}
    if "SSL" in protocol:
        config |= {"ssl.ca.location": str(cluster.ca)}
    return config


def wire(cluster: Cluster, listener: str, position: int) -> WireClient:
    """A wire client on broker `position`'s `listener`, through TLS (verified against the dev CA
    for 127.0.0.1) where the listener has it; not yet authenticated."""
    client = WireClient(cluster.addresses[listener][position], timeout_s=10)
    if "SSL" in PROTOCOLS[listener]:
        context = ssl.create_default_context(cafile=str(cluster.ca))
        client.sock = context.wrap_socket(client.sock, server_hostname="127.0.0.1")
    return client


def plain_login(client: WireClient, password: str) -> Any:
    """SaslHandshake v1 then SaslAuthenticate v2 with a PLAIN token; the SaslAuthenticate answer."""
    assert client.request(SASL_HANDSHAKE, 1, {"mechanism": "PLAIN"}).error_code == ErrorCode.NONE
    return client.request(SASL_AUTHENTICATE, 2, {"auth_bytes": f"\0{USER}\0{password}".encode()})


def logged_in(cluster: Cluster, listener: str, position: int) -> WireClient:
    client = wire(cluster, listener, position)
    if "SASL" in PROTOCOLS[listener]:
        assert plain_login(client, PASSWORD).error_code == ErrorCode.NONE
    return client


def group_coordinated_by(cluster: Cluster, listener: str, position: int) -> str:
    """A fresh group id whose coordinator is broker `position` (asked on `listener`)."""
    with logged_in(cluster, listener, 0) as client:
        for _ in range(64):
            group = f"g-{uuid.uuid4().hex[:8]}"
            found = client.request(FIND_COORDINATOR, 3, {"key": group, "key_type": 0})
            if found.error_code == ErrorCode.NONE and found.node_id == position:
                return group
    raise AssertionError(f"no group coordinated by broker {position}")


@pytest.mark.parametrize("listener", list(PROTOCOLS))
def test_a_producer_and_a_group_use_both_processes(cluster: Cluster, listener: str) -> None:
    from confluent_kafka import Consumer, Producer
    from confluent_kafka.admin import AdminClient, NewTopic

    topic, records = f"{listener.lower()}-{uuid.uuid4().hex[:6]}", 100
    config = client_config(cluster, listener)
    admin = AdminClient(config)
    admin.create_topics([NewTopic(topic, 2, 1)])[topic].result(15)  # the controller makes it
    partitions = admin.list_topics(topic, timeout=10).topics[topic].partitions.values()
    assert sorted(p.leader for p in partitions) == [0, 1]  # a partition led by each process

    producer = Producer(config | {"enable.idempotence": True})
    for i in range(records):
        producer.produce(topic, key=str(i), value=f"v{i}")
    assert producer.flush(15) == 0

    # The group's coordinator is the process that is not the controller.
    group = group_coordinated_by(cluster, listener, 1)
    consumer = Consumer(
        config | {"group.id": group, "auto.offset.reset": "earliest", "enable.auto.commit": False}
    )
    try:
        consumer.subscribe([topic])
        values: set[bytes | None] = set()
        deadline = time.monotonic() + 20
        while len(values) < records and time.monotonic() < deadline:
            message = consumer.poll(0.5)
            if message is not None and message.error() is None:
                values.add(message.value())
        assert len(values) == records
        consumer.commit(asynchronous=False)
        assert sum(tp.offset for tp in consumer.committed(consumer.assignment(), timeout=10)) == records
    finally:
        consumer.close()


@pytest.mark.parametrize("listener", [name for name, protocol in PROTOCOLS.items() if "SASL" in protocol])
def test_each_process_refuses_a_wrong_password(cluster: Cluster, listener: str) -> None:
    for position in (0, 1):
        with wire(cluster, listener, position) as client:
            answer = plain_login(client, "not-the-password")
            assert answer.error_code == ErrorCode.SASL_AUTHENTICATION_FAILED
            assert answer.error_message == "Authentication failed: Invalid username or password"
            assert client.is_closed_by_peer()  # closed after the answer, as one process does
        with logged_in(cluster, listener, position) as client:  # the right one still logs in
            metadata = {"topics": [], "allow_auto_topic_creation": False}
            assert len(client.request(METADATA, 9, metadata).brokers) == 2


@pytest.mark.parametrize("listener", list(PROTOCOLS))
def test_each_process_advertises_every_brokers_own_address_per_listener(
    cluster: Cluster, listener: str
) -> None:
    expected = {node_id: address for node_id, address in enumerate(cluster.addresses[listener])}
    metadata = {"topics": [], "allow_auto_topic_creation": False}
    for position in (0, 1):
        with logged_in(cluster, listener, position) as client:
            answer = client.request(METADATA, 9, metadata)
        assert {b.node_id: f"{b.host}:{b.port}" for b in answer.brokers} == expected
        assert answer.controller_id == 0


@pytest.mark.parametrize("listener", list(PROTOCOLS))
def test_a_topic_auto_created_through_the_other_process_is_made_by_the_controller(
    cluster: Cluster, listener: str
) -> None:
    """With no PLAINTEXT listener the other process asks the controller over CLIENT
    (SASL_PLAINTEXT), logged in as alice with SCRAM-SHA-256 (shim.processes.peer_route)."""
    from confluent_kafka import Producer

    follower = {"bootstrap.servers": cluster.addresses[listener][1]}  # only it answers Metadata
    producer = Producer(client_config(cluster, listener) | follower)
    topic = f"auto-{uuid.uuid4().hex[:8]}"
    for i in range(10):
        producer.produce(topic, value=b"v%d" % i)
    assert producer.flush(15) == 0


def test_mutual_tls_on_both_processes(tmp_path: Path) -> None:
    """ssl.client.auth=required: a client with the dev CA's client certificate produces and
    consumes through both processes; one without is refused by each. A broker process has no
    client certificate, so the start says the other process does not forward auto-creation."""
    from confluent_kafka import Consumer, Producer
    from confluent_kafka.admin import AdminClient, NewTopic

    certs = write_dev_certs(tmp_path / "certs", DEFAULT_HOSTS, "client", 2)
    argv = [sys.executable, "-m", "kafka_shim", "--brokers", "2", "--process-per-broker"]
    argv += ["--listeners", "SSL://127.0.0.1:0", "--config", f"ssl.keystore.location={certs['broker']}"]
    argv += ["--config", f"ssl.truststore.location={certs['ca']}", "--config", "ssl.client.auth=required"]
    argv += ["--data-dir", str(tmp_path / "data"), "--console", "off", "--log-level", "WARNING"]
    argv += ["--initial-rebalance-delay-ms", "0"]
    broker = launch("shim", argv, timeout_s=60)
    try:
        line = next(line for line in broker.output if "listening on" in line)
        addresses = re.findall(r"(127\.0\.0\.1:\d+) \(broker \d\)", line)
        assert any("no listener a broker process can use" in each for each in broker.output)
        config: dict[str, Any] = {
            "bootstrap.servers": ",".join(addresses),
            "security.protocol": "ssl",
            "ssl.ca.location": str(certs["ca"]),
            "ssl.certificate.location": str(certs["client_cert"]),
            "ssl.key.location": str(certs["client_key"]),
        }
        topic = "mutual"
        admin = AdminClient(config)
        admin.create_topics([NewTopic(topic, 2, 1)])[topic].result(15)
        producer = Producer(config)
        for i in range(20):
            producer.produce(topic, value=b"v%d" % i)
        assert producer.flush(15) == 0
        consumer = Consumer(config | {"group.id": "g-mutual", "auto.offset.reset": "earliest"})
        try:
            consumer.subscribe([topic])
            values: set[bytes | None] = set()
            deadline = time.monotonic() + 20
            while len(values) < 20 and time.monotonic() < deadline:
                message = consumer.poll(0.5)
                if message is not None and message.error() is None:
                    values.add(message.value())
            assert len(values) == 20
        finally:
            consumer.close()
        for address in addresses:  # no client certificate: the handshake fails on each
            client = WireClient(address, timeout_s=10)
            context = ssl.create_default_context(cafile=str(certs["ca"]))
            with pytest.raises(OSError):  # ssl.SSLError, or the connection closed
                client.sock = context.wrap_socket(client.sock, server_hostname="127.0.0.1")
                client.request(METADATA, 9, {"topics": [], "allow_auto_topic_creation": False})
            client.close()
    finally:
        broker.stop()
