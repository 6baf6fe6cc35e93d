"""The console and /metrics against real clients: a group of three confluent-kafka consumers
shows with its members, assignment, committed offsets and lag; /metrics, parsed by
prometheus_client's own parser, gives the lag the admin API computes; the page, driven in a
headless Chromium, shows the group and a rebalance on its timeline without being reloaded."""

from __future__ import annotations

import json
import logging
import shutil
import socket
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition
from prometheus_client.parser import text_string_to_metric_families

from kafka_shim.shim.config.broker_config import BrokerConfig
from kafka_shim.shim.server import BrokerThread
from tests.helpers import wait_until

TOPIC, GROUP, PARTITIONS, RECORDS = "orders", "billing", 3, 30


def get(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=10) as response:
        body = response.read().decode()
    return body if response.headers.get_content_type() != "application/json" else json.loads(body)


@pytest.fixture
def broker() -> Iterator[BrokerThread]:
    thread = BrokerThread(BrokerConfig(port=0, console_listener="127.0.0.1:0")).start()
    thread.call(lambda: thread.broker.topics.create(TOPIC, PARTITIONS, {}))
    wait_until(lambda: bool(thread.server.console_urls), "the console listening", deadline_s=30)
    yield thread
    thread.stop()


def consumer(bootstrap: str, name: str) -> Consumer:
    member = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": GROUP,
            "client.id": name,
            "auto.offset.reset": "earliest",
            "enable.auto.commit": False,
            "session.timeout.ms": 6000,
        }
    )
    member.subscribe([TOPIC])
    return member


def produce(bootstrap: str, count: int) -> None:
    producer = Producer({"bootstrap.servers": bootstrap, "enable.idempotence": True})
    for n in range(count):
        producer.produce(
            TOPIC, json.dumps({"order": n}).encode(), key=f"k{n}".encode(), partition=n % PARTITIONS
        )
    assert producer.flush(10) == 0


def group_of(console: str) -> dict[str, Any]:
    return get(f"{console}/console/api/groups/{GROUP}")


@pytest.fixture
def members(broker: BrokerThread) -> Iterator[list[Consumer]]:
    produce(broker.bootstrap, RECORDS)
    group = [consumer(broker.bootstrap, f"member-{n}") for n in range(3)]
    console = broker.server.console_urls[0]

    def settled() -> bool:
        for member in group:
            member.poll(0.1)
        view = group_of(console)
        owned = [tp for m in view["members"] for tp in m["assignment"]]
        stable = view["state"] == "Stable" and len(view["members"]) == 3 and len(owned) == PARTITIONS
        return stable and all(member.assignment() for member in group)  # each member knows its own

    wait_until(settled, deadline_s=60, what="three members owning every partition")
    # Each member commits half of what its partitions hold: a known lag remains.
    for member in group:
        member.commit(
            offsets=[
                TopicPartition(tp.topic, tp.partition, RECORDS // PARTITIONS // 2)
                for tp in member.assignment()
            ],
            asynchronous=False,
        )
    yield group
    for member in group:
        member.close()


def test_the_group_shows_members_assignment_offsets_and_lag(
    broker: BrokerThread, members: list[Consumer]
) -> None:
    console = broker.server.console_urls[0]
    view = group_of(console)
    assert sorted(m["client_id"] for m in view["members"]) == ["member-0", "member-1", "member-2"]
    assert sorted(tuple(tp) for m in view["members"] for tp in m["assignment"]) == [
        (TOPIC, p) for p in range(3)
    ]
    per_partition = RECORDS // PARTITIONS
    assert [(o["partition"], o["committed"], o["lag"]) for o in view["offsets"]] == [
        (p, per_partition // 2, per_partition - per_partition // 2) for p in range(3)
    ]
    kinds = [event["kind"] for event in view["timeline"]]
    assert kinds.count("joined") == 3 and "rebalance" in kinds
    records = get(f"{console}/console/api/topics/{TOPIC}/records?partition=0&offset=0&limit=2")
    assert [json.loads(r["value"]["text"]) for r in records["records"]] == [{"order": 0}, {"order": 3}]
    assert [r["key"]["text"] for r in records["records"]] == ["k0", "k3"]
    topic = get(f"{console}/console/api/topics/{TOPIC}")
    assert [p["high_watermark"] for p in topic["partitions"]] == [RECORDS // PARTITIONS] * PARTITIONS
    assert {p["partition"] for p in topic["producers"]} == set(range(PARTITIONS))  # the idempotent producer


def test_metrics_give_the_lag_the_admin_api_computes(broker: BrokerThread, members: list[Consumer]) -> None:
    families = {
        f.name: f for f in text_string_to_metric_families(get(f"{broker.server.console_urls[0]}/metrics"))
    }
    lag = {
        (s.labels["topic"], int(s.labels["partition"])): s.value
        for s in families["kafka_consumergroup_lag"].samples
        if s.labels["consumergroup"] == GROUP
    }
    # The admin view: each partition's high watermark less the group's committed offset.
    checker = members[0]
    committed = checker.committed([TopicPartition(TOPIC, p) for p in range(PARTITIONS)], timeout=10)
    expected = {
        (TOPIC, tp.partition): checker.get_watermark_offsets(tp, timeout=10)[1] - tp.offset
        for tp in committed
    }
    assert lag == expected
    current = {
        int(s.labels["partition"]): s.value
        for s in families["kafka_topic_partition_current_offset"].samples
        if s.labels["topic"] == TOPIC
    }
    assert current == {p: RECORDS // PARTITIONS for p in range(PARTITIONS)}
    requests = {
        (s.labels["api"]): s.value
        for s in families["kafka_shim_requests"].samples
        if s.name.endswith("_total")
    }
    assert requests["JoinGroup"] >= 3 and requests["OffsetCommit"] >= 3
    assert families["kafka_consumergroup_members"].samples[0].value == 3
    produced = {s.labels["topic"]: s.value for s in families["kafka_shim_topic_bytes_in"].samples}
    fetched = {s.labels["topic"]: s.value for s in families["kafka_shim_topic_bytes_out"].samples}
    assert produced[TOPIC] > 0 and fetched[TOPIC] > 0


def test_the_page_shows_the_group_and_a_rebalance_live(broker: BrokerThread, members: list[Consumer]) -> None:
    if shutil.which("chromium") is None or shutil.which("chromedriver") is None:
        pytest.fail("Debian's chromium and chromium-driver are needed: bash .ci/run installs them")
    from selenium import webdriver

    options = webdriver.ChromeOptions()
    options.binary_location = shutil.which("chromium") or ""
    for flag in (
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
    ):
        options.add_argument(flag)
    service = webdriver.ChromeService(executable_path=shutil.which("chromedriver"))
    browser = webdriver.Chrome(options=options, service=service)
    try:
        browser.get(f"{broker.server.console_urls[0]}/console#/group/{GROUP}")

        def rows(table: str) -> list[str]:
            # Read in one script call: the page re-renders every second, so element handles go stale.
            script = (
                f"return Array.from(document.querySelectorAll('#{table} tbody tr')).map(r => r.innerText)"
            )
            return list(browser.execute_script(script))

        wait_until(lambda: len(rows("members")) == 3, deadline_s=20, what="three members on the page")
        assert rows("old-version-clients") == []  # shown only once such a client came
        browser.execute_script("window.notReloaded = true")
        rebalances = sum("rebalance #" in row for row in rows("timeline"))
        members.pop().close()  # a member leaves: the group rebalances

        def shown() -> bool:
            for member in members:
                member.poll(0.1)
            return sum("rebalance #" in row for row in rows("timeline")) > rebalances

        wait_until(shown, deadline_s=30, what="the rebalance on the page's timeline")
        assert browser.execute_script("return window.notReloaded") is True
        assert any("member removed (LeaveGroup" in row for row in rows("timeline"))
        legacy_client_produces(broker.bootstrap)
        wait_until(
            lambda: any(row.startswith("legacy-app\tProduce\t2\t") for row in rows("old-version-clients")),
            deadline_s=10,
            what="the client using a version Kafka 4 removed, listed on the page",
        )
    finally:
        browser.quit()


def test_a_console_port_in_use_is_a_warning_and_kafka_is_served(caplog: pytest.LogCaptureFixture) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        thread = BrokerThread(BrokerConfig(port=0, console_listener=f"127.0.0.1:{port}")).start()
        try:
            wait_until(
                lambda: "console not served" in caplog.text, "the warning about the console", deadline_s=30
            )
            producer = Producer({"bootstrap.servers": thread.bootstrap})
            producer.produce(TOPIC, b"still served")
            assert producer.flush(10) == 0
            assert thread.server.console_urls == []
        finally:
            thread.stop()


def test_the_test_broker_page_shows_the_clock_and_the_rules_with_their_firings(broker: BrokerThread) -> None:
    rule = broker.call(
        lambda: broker.broker.faults.add({"api": "Metadata", "error": "NOT_CONTROLLER", "times": 1})
    )
    producer = Producer({"bootstrap.servers": broker.bootstrap})
    producer.list_topics(timeout=10)  # the first Metadata gets the error; the client retries
    state = get(f"{broker.server.console_urls[0]}/console/api/test-broker")
    assert state["clock"]["frozen"] is False
    (shown,) = state["rules"]
    assert (shown["id"], shown["api"], shown["error"], shown["fired"]) == (
        rule.id,
        "Metadata",
        "NOT_CONTROLLER",
        1,
    )
    assert len(state["firings"]) == 1


def legacy_client_produces(bootstrap: str) -> None:
    """kafka-python pinned to Kafka 0.10's protocol: Produce v2, which Kafka 4 removed (KIP-896)."""
    from kafka import KafkaProducer

    producer = KafkaProducer(bootstrap_servers=bootstrap, api_version=(0, 10), client_id="legacy-app")
    producer.send(TOPIC, b"old", partition=0).get(10)
    producer.close()


def test_clients_using_versions_kafka_4_removed_are_listed(broker: BrokerThread) -> None:
    legacy_client_produces(broker.bootstrap)
    listed = get(f"{broker.server.console_urls[0]}/console/api/overview")["old_version_clients"]
    assert [(c["client_id"], c["api"], c["versions"], c["requests"]) for c in listed] == [
        ("legacy-app", "Produce", [2], 1)
    ]


def test_the_console_log_line_names_the_address_bound(caplog: pytest.LogCaptureFixture) -> None:
    """--console 0.0.0.0:PORT (as in the Docker image) binds every interface, and says so."""
    caplog.set_level(logging.INFO, "kafka_shim.server")
    thread = BrokerThread(BrokerConfig(port=0, console_listener="0.0.0.0:0")).start()
    try:
        # Its addresses are kept just before the line is logged, on the broker's thread.
        wait_until(lambda: "console on" in caplog.text, "the console listening", deadline_s=30)
        port = thread.server.console_urls[0].rsplit(":", 1)[1]
        assert f"console on http://0.0.0.0:{port}/console" in caplog.text
        assert thread.server.console_urls == [f"http://127.0.0.1:{port}"]  # where this machine reaches it
    finally:
        thread.stop()
