"""One client, kafka-python 3.0.12, against each emulated release and the default (no
--emulate): it infers the release from the ApiVersions maxima as it would from a real broker of
it (the default's maxima are the newest release's), then produces and consumes. And KIP-896's
removals on the wire: a 4.x broker closes the connection on a removed version (Produce v0-2 too,
though listed), which 3.9 and the default answer."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer
from kafka.admin import NewTopic

from compat.java_build import OLDER_KAFKA_CLIENTS
from kafka_shim.protocol.releases import RELEASES
from kafka_shim.shim.config.broker_config import BrokerConfig, apply_kafka_configs
from kafka_shim.shim.server import BrokerThread
from tests.helpers import java_driver
from tests.wire import WireClient

TIMEOUT_MS = 10_000
# What kafka-python infers (it tells 4.0 by ListOffsets v10, 4.1 by Produce v13, 4.2 by
# ListOffsets v11); against 4.1 and 4.2 its producer then names topics by id (Produce v13).
INFERRED = {"3.9": (3, 9), "4.0": (4, 0), "4.1": (4, 1), "4.2": (4, 2)}
FETCH, PRODUCE = 1, 0


@pytest.fixture(params=[*RELEASES, None], ids=[*RELEASES, "default"])
def broker(request: pytest.FixtureRequest) -> Iterator[BrokerThread]:
    config = BrokerConfig(host="127.0.0.1", port=0, emulate=request.param)
    thread = BrokerThread(config).start()
    yield thread
    thread.stop()


def test_kafka_python_infers_the_release_and_round_trips(broker: BrokerThread) -> None:
    release = broker.broker.config.release.name
    admin = KafkaAdminClient(bootstrap_servers=broker.bootstrap, request_timeout_ms=TIMEOUT_MS)
    try:
        assert admin.get_broker_version_data(broker.broker.node_id).broker_version == INFERRED[release]
        admin.create_topics([NewTopic("emulated", 1, 1)])
    finally:
        admin.close()
    producer = KafkaProducer(bootstrap_servers=broker.bootstrap, request_timeout_ms=TIMEOUT_MS)
    producer.send("emulated", b"under " + release.encode()).get(timeout=10)
    producer.close()
    consumer = KafkaConsumer(
        "emulated",
        bootstrap_servers=broker.bootstrap,
        auto_offset_reset="earliest",
        consumer_timeout_ms=TIMEOUT_MS,
    )
    try:
        assert next(iter(consumer)).value == b"under " + release.encode()
    finally:
        consumer.close()


FETCH_V3 = {"replica_id": -1, "max_wait_ms": 0, "min_bytes": 0, "topics": []}
PRODUCE_V2 = {"acks": 1, "timeout_ms": 1000, "topic_data": []}


@pytest.mark.parametrize(("api_key", "version", "body"), [(FETCH, 3, FETCH_V3), (PRODUCE, 2, PRODUCE_V2)])
def test_kip_896_removed_versions_close_the_connection_from_4_0(
    broker: BrokerThread, api_key: int, version: int, body: dict[str, object]
) -> None:
    with WireClient(broker.bootstrap) as client:
        if broker.broker.config.emulate in ("3.9", None):
            assert client.request(api_key, version, body) is not None
        else:
            client.send_raw(client.frame(api_key, version, body))
            assert client.is_closed_by_peer()


@pytest.mark.clients
@pytest.mark.parametrize("kafka_clients", list(OLDER_KAFKA_CLIENTS))
@pytest.mark.parametrize("group_protocol", ["classic", "consumer"])
def test_older_java_client_round_trips_in_a_group_under_its_release(
    kafka_clients: str, group_protocol: str
) -> None:
    """The Java client of an older Kafka (compat/java built against its own jar: 3.9.0, 4.1.0)
    against a broker emulating that release: it produces, then a group reads it all and
    commits, with the classic protocol and with KIP-848 (under 3.9 its preview, v0 of its APIs,
    turned on as 3.9 needed by group.coordinator.rebalance.protocols; without it the client is
    refused as 3.9 refuses it)."""
    release = kafka_clients.rsplit(".", 1)[0]
    base = BrokerConfig(host="127.0.0.1", port=0, emulate=release, auto_create_topics=True)
    config = apply_kafka_configs(base, {"group.coordinator.rebalance.protocols": "classic,consumer"})
    thread = BrokerThread(config).start()
    try:
        topic, group = f"java-{group_protocol}", f"g-{group_protocol}"
        common = {"bootstrap": thread.bootstrap, "topic": topic, "count": 20, "timeout_s": 20}
        produced = java_driver({"op": "produce", **common}, kafka_clients)
        assert (produced[-1]["event"], produced[-1]["count"]) == ("produced", 20)
        consumed = java_driver(
            {"op": "consume", **common, "group": group, "group_protocol": group_protocol}, kafka_clients
        )
        assert sorted(int(e["value"]) for e in consumed if e["event"] == "message") == list(range(20))
        assert (consumed[-1]["event"], consumed[-1]["offsets"]) == ("committed", {"0": 20})
        committed = thread.call(lambda: thread.broker.groups.fetch_offsets(group, None))
        assert {tp.topic: fetched.offset for tp, fetched in committed.items()} == {topic: 20}
    finally:
        thread.stop()
