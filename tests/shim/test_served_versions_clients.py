"""Clients of Kafka 2.x days against a broker started without --emulate: each round-trips,
joins a group and commits, and the broker logs once per client id and API what Kafka 4 would
have refused (KIP-896). The same clients against `--emulate 4.2` are refused as Kafka 4.2
refuses them.

- librdkafka (confluent-kafka) with `api.version.request=false`, `broker.version.fallback=0.9.0`
  (a fallback of 0.10.0 or later turns ApiVersions back on): Produce v1, Fetch v1, ListOffsets v0
  and a JoinGroup v0 group.
- kafka-python 3.0.12 with `api_version=(0, 9)` (its oldest with groups) and `(0, 10)`: Produce and
  Fetch v1 / v2; two members rebalance.
- sarama 1.22 (Debian's golang-github-shopify-sarama-dev, built with Debian's Go in GOPATH
  mode) at `Config.Version = V2_1_0_0`: OffsetCommit v1, refused by Kafka 4.x, so that the
  service commits nothing there.
"""

from __future__ import annotations

import logging
import shutil
import subprocess
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from confluent_kafka import Consumer, Producer
from kafka import KafkaConsumer, KafkaProducer

from kafka_shim.protocol.releases import NEWEST
from kafka_shim.pytest_plugin import KafkaShim
from tests.helpers import wait_until

pytestmark = pytest.mark.clients

DEADLINE_S = 20
SARAMA_SOURCE = Path(__file__).parent / "data" / "sarama_old_client.go"
# Debian's Go packages live in GOPATH layout; the Go module proxy is not used.
DEBIAN_GOPATH = Path("/usr/share/gocode")
SARAMA = DEBIAN_GOPATH / "src" / "github.com" / "Shopify" / "sarama"


def kip_896_lines(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == "kafka_shim.kip896"]


def warning(client: str, api: str, version: int) -> str:
    return (
        f"client {client!r} ({{peer}}) sent {api} v{version}, a version Kafka 4.0 removed (KIP-896): "
        f"Kafka {NEWEST} would close its connection; served because no --emulate release is set"
    )


def without_peers(lines: list[str]) -> set[str]:
    """The log lines with each `(host:port)` replaced by `({peer})`."""
    out = set()
    for line in lines:
        head, _, rest = line.partition(" (")
        out.add(head + " ({peer})" + rest[rest.index(")") + 1 :])
    return out


def test_librdkafka_without_api_version_request_round_trips_and_commits(
    kafka_shim: KafkaShim, caplog: pytest.LogCaptureFixture
) -> None:
    old = {
        "bootstrap.servers": kafka_shim.bootstrap,
        "api.version.request": False,
        "broker.version.fallback": "0.9.0",
        "client.id": "rdkafka-0.9",
        "log_level": 3,
    }
    kafka_shim.create_topic("old-rd", 1)
    caplog.set_level(logging.WARNING, "kafka_shim.kip896")
    producer = Producer(old)
    for i in range(3):
        producer.produce("old-rd", b"v%d" % i)
    assert producer.flush(DEADLINE_S) == 0
    consumer = Consumer(
        old | {"group.id": "old-rd", "auto.offset.reset": "earliest", "enable.auto.commit": False}
    )
    consumer.subscribe(["old-rd"])
    received: list[bytes | None] = []
    deadline = time.monotonic() + DEADLINE_S
    while len(received) < 3 and time.monotonic() < deadline:
        message = consumer.poll(0.5)
        if message is not None:
            assert message.error() is None, message.error()
            received.append(message.value())
    consumer.commit(asynchronous=False)
    consumer.close()
    assert received == [b"v0", b"v1", b"v2"]
    assert kafka_shim.committed("old-rd") == {("old-rd", 0): 3}
    assert {warning("rdkafka-0.9", "Produce", 1), warning("rdkafka-0.9", "Fetch", 1)} <= without_peers(
        kip_896_lines(caplog)
    )
    seen = {(u.client_id, u.api) for u in kafka_shim.broker.old_version_clients.uses()}
    assert {("rdkafka-0.9", "Produce"), ("rdkafka-0.9", "Fetch")} <= seen


class Polling(threading.Thread):
    """One kafka-python consumer polled on a thread of its own, as an application runs it: its
    JoinGroup blocks its poll until every member rejoined, so two members polled in turn from one
    thread would wait on each other until the rebalance timeout."""

    def __init__(self, consumer: KafkaConsumer) -> None:
        super().__init__(daemon=True)
        self.consumer = consumer
        self.values: list[bytes] = []
        self.partitions: frozenset[int] = frozenset()
        self.stopping = threading.Event()

    def run(self) -> None:
        while not self.stopping.is_set():
            for records in self.consumer.poll(timeout_ms=100).values():
                self.values += [r.value for r in records]
            self.partitions = frozenset(tp.partition for tp in self.consumer.assignment())

    def stop(self) -> KafkaConsumer:
        self.stopping.set()
        self.join(DEADLINE_S)
        return self.consumer


@pytest.mark.parametrize(("api_version", "produce_fetch"), [((0, 9), 1), ((0, 10), 2)])
def test_old_kafka_python_round_trips_and_rebalances(
    kafka_shim: KafkaShim, caplog: pytest.LogCaptureFixture, api_version: tuple[int, int], produce_fetch: int
) -> None:
    client_id = f"kp-{api_version[0]}.{api_version[1]}"
    kafka_shim.create_topic("old-kp", 2)
    caplog.set_level(logging.WARNING, "kafka_shim.kip896")
    producer = KafkaProducer(
        bootstrap_servers=kafka_shim.bootstrap, api_version=api_version, client_id=client_id
    )

    def produce(value: bytes) -> None:
        for partition in (0, 1):
            producer.send("old-kp", value + b"-%d" % partition, partition=partition).get(DEADLINE_S)

    settings = {
        "bootstrap_servers": kafka_shim.bootstrap,
        "api_version": api_version,
        "group_id": "old-kp",
        "client_id": client_id,
        "auto_offset_reset": "earliest",
        "enable_auto_commit": False,
    }
    produce(b"before")
    consumers = [KafkaConsumer("old-kp", **settings)]
    try:
        alone = Polling(consumers[0])
        alone.start()
        wait_until(
            lambda: len(alone.values) == 2, deadline_s=DEADLINE_S, what="the first member reading both"
        )
        alone.stop().commit()
        before = alone.values
        consumers.append(KafkaConsumer("old-kp", **settings))
        members = [Polling(consumer) for consumer in consumers]
        for polling in members:
            polling.start()
        # The second member's join rebalances the group: one partition each, from the commits.
        wait_until(
            lambda: (
                members[0].partitions | members[1].partitions == {0, 1}
                and all(len(m.partitions) == 1 for m in members)
            ),
            deadline_s=DEADLINE_S,
            what="one partition each",
        )
        produce(b"after")
        wait_until(lambda: all(m.values for m in members), deadline_s=DEADLINE_S, what="a record each")
        after = [(sorted(m.partitions), m.values) for m in members]
        for polling in members:
            polling.stop().commit()
    finally:
        producer.close()
        for consumer in consumers:
            consumer.close()
    assert sorted(before) == [b"before-0", b"before-1"]
    assert after == [([p], [b"after-%d" % p]) for (p,), _ in after]
    assert kafka_shim.committed("old-kp") == {("old-kp", 0): 2, ("old-kp", 1): 2}
    expected = {warning(client_id, "Produce", produce_fetch), warning(client_id, "Fetch", produce_fetch)}
    assert expected <= without_peers(kip_896_lines(caplog))


@pytest.fixture(scope="module")
def sarama_client(tmp_path_factory: pytest.TempPathFactory) -> Path:
    go = shutil.which("go")
    assert go is not None and SARAMA.is_dir(), (
        "needs Debian's golang-go and golang-github-shopify-sarama-dev (sarama 1.22): "
        "bash .ci/run installs them"
    )
    binary = tmp_path_factory.mktemp("sarama") / "sarama_old_client"
    env = {
        "GO111MODULE": "off",
        "GOPATH": str(DEBIAN_GOPATH),
        "HOME": str(Path.home()),
        "PATH": "/usr/bin:/bin",
    }
    subprocess.run(
        [go, "build", "-o", str(binary), str(SARAMA_SOURCE)],
        env=env,
        check=True,
        capture_output=True,
        timeout=300,
    )
    return binary


@pytest.mark.parametrize("emulate", [None, "4.2"], ids=["default", "emulate-4.2"])
def test_sarama_1_22_commits_by_default_and_not_under_kafka_4(
    kafka_shim_factory: Callable[..., KafkaShim],
    sarama_client: Path,
    caplog: pytest.LogCaptureFixture,
    emulate: str | None,
) -> None:
    kafka_shim = kafka_shim_factory(emulate=emulate)
    kafka_shim.create_topic("old-go", 1)
    caplog.set_level(logging.WARNING)
    run = subprocess.run(
        [str(sarama_client), kafka_shim.bootstrap, "old-go", "old-go", "4"],
        capture_output=True,
        text=True,
        timeout=DEADLINE_S + 10,
    )
    assert run.stdout.split("\n")[:2] == ["produced 4", "consumed 4"], run.stderr
    if emulate is None:
        assert kafka_shim.committed("old-go") == {("old-go", 0): 4}
        assert without_peers(kip_896_lines(caplog)) == {warning("sarama-1.22", "OffsetCommit", 1)}
    else:
        # Kafka 4.2 closes the connection: the service consumed, yet committed nothing.
        assert kafka_shim.committed("old-go") == {}
        refusals = {
            r.getMessage().partition(": ")[2] for r in caplog.records if r.name == "kafka_shim.server"
        }
        assert (
            "unsupported OffsetCommit version 1 (supported 2-10; a broker without --emulate serves it)"
            in refusals
        )
