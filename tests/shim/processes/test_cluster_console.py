"""`--brokers 2 --process-per-broker` serves the console and /metrics of the whole cluster at
--console (shim.processes.cluster_console): topics, partitions, groups and lag from both
processes, requests counted by both, actions done by the process owning what they change, and
a process that does not answer named within a deadline."""

from __future__ import annotations

import base64
import json
import os
import re
import signal
import ssl
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from compat.targets import RunningBroker, free_port, launch
from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.protocol.settings.security import STANDARD_AUTHORIZER
from kafka_shim.shim.processes.cluster_console import ANSWER_TIMEOUT_S
from kafka_shim.shim.processes.spec import SPEC_ENV
from tests.wire import WireClient

pytestmark = pytest.mark.clients

FIND_COORDINATOR = 10
TOPIC, PARTITIONS, RECORDS = "console-orders", 4, 40


@dataclass
class Cluster:
    supervisor: RunningBroker
    addresses: list[str]  # broker 0's, broker 1's
    console: str  # http://HOST:PORT
    pids: dict[int, int]  # node id -> its process
    groups: dict[int, str]  # node id -> a group it coordinates


def get(url: str) -> tuple[int, Any]:
    try:
        with urllib.request.urlopen(url, timeout=30) as response:
            body = response.read()
            status = response.status
    except urllib.error.HTTPError as refused:
        body, status = refused.read(), refused.code
    try:
        return status, json.loads(body)
    except ValueError:
        return status, body.decode()


def post(url: str, body: dict[str, Any]) -> tuple[int, Any]:
    request = urllib.request.Request(
        url, json.dumps(body).encode(), {"Content-Type": "application/json"}, method="POST"
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as refused:
        return refused.code, json.loads(refused.read())


def node_pids(supervisor: int) -> dict[int, int]:
    """Each broker process by the node id its spec names."""
    pids = {}
    for child in Path(f"/proc/{supervisor}/task/{supervisor}/children").read_text().split():
        environ = Path(f"/proc/{child}/environ").read_bytes().split(b"\0")
        spec = next(e for e in environ if e.startswith(SPEC_ENV.encode() + b"="))
        pids[json.loads(spec.split(b"=", 1)[1])["node_id"]] = int(child)
    return pids


def coordinated_groups(address: str, addresses: list[str]) -> dict[int, str]:
    """A group id coordinated by each broker."""
    found: dict[int, str] = {}
    with WireClient(address, timeout_s=10) as client:
        for n in range(64):
            group = f"console-g{n}"
            answer = client.request(FIND_COORDINATOR, 3, {"key": group, "key_type": 0})
            assert answer.error_code == ErrorCode.NONE
            found.setdefault(addresses.index(f"{answer.host}:{answer.port}"), group)
            if len(found) == len(addresses):
                return found
    raise AssertionError(f"no group coordinated by every broker: {found}")


@contextmanager
def supervised(data_dir: Path, *listening: str) -> Iterator[tuple[RunningBroker, str]]:
    """The supervisor of two broker processes listening as `listening` says, once its console
    (on a free port) serves; the console's URL."""
    argv = [sys.executable, "-m", "kafka_shim", "--brokers", "2", "--process-per-broker", *listening]
    argv += ["--data-dir", str(data_dir), "--log-level", "WARNING", "--schema-registry", "off"]
    argv += ["--console", f"127.0.0.1:{free_port()}", "--console-actions"]
    supervisor = launch("shim", argv, timeout_s=60)
    try:
        deadline = time.monotonic() + 60
        while not (found := [line for line in supervisor.output if "console on" in line]):
            assert time.monotonic() < deadline, "\n".join(supervisor.output[-20:])
            time.sleep(0.05)
        yield supervisor, re.findall(r"(https?://127\.0\.0\.1:\d+)/console", found[0])[0]
    finally:
        supervisor.stop()


@contextmanager
def started(data_dir: Path) -> Iterator[Cluster]:
    with supervised(data_dir, "--host", "127.0.0.1", "--port", "0") as (supervisor, console):
        line = next(line for line in supervisor.output if "listening on" in line)
        addresses = re.findall(r"(127\.0\.0\.1:\d+) \(broker \d\)", line)
        assert supervisor.process is not None
        yield Cluster(
            supervisor,
            addresses,
            console,
            node_pids(supervisor.process.pid),
            coordinated_groups(addresses[0], addresses),
        )


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    """Both processes with a topic led by each, records in every partition and a group
    coordinated by each that committed offset 0 of every partition through its coordinator."""
    from confluent_kafka import Consumer, Producer, TopicPartition
    from confluent_kafka.admin import AdminClient, NewTopic

    with started(tmp_path_factory.mktemp("console") / "data") as running:
        bootstrap = ",".join(running.addresses)
        admin = AdminClient({"bootstrap.servers": bootstrap})
        admin.create_topics([NewTopic(TOPIC, PARTITIONS, 2)])[TOPIC].result(10)
        producer = Producer({"bootstrap.servers": bootstrap})
        for i in range(RECORDS):
            producer.produce(TOPIC, value=b"v%d" % i, partition=i % PARTITIONS)
        assert producer.flush(15) == 0
        for group in running.groups.values():
            consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": group})
            try:
                offsets = [TopicPartition(TOPIC, p, 0) for p in range(PARTITIONS)]
                assert all(tp.error is None for tp in consumer.commit(offsets=offsets, asynchronous=False))
            finally:
                consumer.close()
        yield running


def leaders(cluster: Cluster) -> dict[int, int]:
    status, topic = get(f"{cluster.console}/console/api/topics/{TOPIC}")
    assert status == 200, topic
    return {p["partition"]: p["leader"] for p in topic["partitions"]}


def test_the_console_shows_every_process_topics_partitions_and_groups(cluster: Cluster) -> None:
    status, topics = get(f"{cluster.console}/console/api/topics")
    assert status == 200, topics
    (orders,) = [t for t in topics if t["name"] == TOPIC]
    assert [p["partition"] for p in orders["partitions"]] == list(range(PARTITIONS))
    assert {p["leader"] for p in orders["partitions"]} == {0, 1}  # led by both processes
    assert [p["high_watermark"] for p in orders["partitions"]] == [RECORDS // PARTITIONS] * PARTITIONS

    status, groups = get(f"{cluster.console}/console/api/groups")
    assert status == 200, groups
    listed = {g["group_id"]: g for g in groups}
    for group in cluster.groups.values():  # coordinated by either process
        # Lag against each partition's leader, whichever process coordinates the group.
        assert listed[group]["lag"] == RECORDS, listed[group]
        assert {(o["partition"], o["committed"]) for o in listed[group]["offsets"]} == {
            (p, 0) for p in range(PARTITIONS)
        }
    status, page = get(f"{cluster.console}/console/api/groups/{cluster.groups[1]}")
    assert status == 200 and page["lag"] == RECORDS and page["state"] == "Empty", page

    led_by_1 = next(p for p, leader in leaders(cluster).items() if leader == 1)
    status, read = get(f"{cluster.console}/console/api/topics/{TOPIC}/records?partition={led_by_1}")
    assert status == 200, read
    assert [r["value"]["text"] for r in read["records"]] == [
        f"v{i}" for i in range(RECORDS) if i % PARTITIONS == led_by_1
    ]
    status, overview = get(f"{cluster.console}/console/api/overview")
    assert status == 200 and overview["partitions"] >= PARTITIONS
    assert overview["bootstrap"] == ",".join(cluster.addresses)


def test_metrics_count_the_requests_of_both_processes(cluster: Cluster) -> None:
    status, text = get(f"{cluster.console}/metrics")
    assert status == 200
    per_broker = dict(re.findall(r'^kafka_shim_broker_requests_total\{broker="(\d)"\} (\S+)$', text, re.M))
    assert float(per_broker["0"]) > 0 and float(per_broker["1"]) > 0, per_broker
    produced = re.findall(r'^kafka_shim_requests_total\{api="Produce",version="\d+"\} (\S+)$', text, re.M)
    assert sum(float(n) for n in produced) >= 2  # at least one to each leader
    lag = re.findall(
        rf'^kafka_consumergroup_lag_sum\{{consumergroup="{cluster.groups[1]}",topic="{TOPIC}"\}} (\S+)$',
        text,
        re.M,
    )
    assert lag == [f"{float(RECORDS)}"]


def test_actions_are_done_by_the_owner_or_refused(cluster: Cluster) -> None:
    partitions = leaders(cluster)
    # Group coordinated by broker 0, partition led by broker 1: the leader's bounds, the
    # coordinator's commit.
    group, partition = cluster.groups[0], next(p for p, leader in partitions.items() if leader == 1)
    url = f"{cluster.console}/console/api/groups/{group}/reset-offsets"
    status, done = post(url, {"topic": TOPIC, "partition": partition, "to": "latest"})
    assert status == 200 and done["offset"] == RECORDS // PARTITIONS, done
    _, page = get(f"{cluster.console}/console/api/groups/{group}")
    assert {o["partition"]: o["committed"] for o in page["offsets"]}[partition] == RECORDS // PARTITIONS

    deleted = next(p for p, leader in partitions.items() if leader == 0)
    url = f"{cluster.console}/console/api/topics/{TOPIC}/delete-records"
    status, done = post(url, {"partition": deleted, "before": 3})
    assert status == 200 and done["low_watermark"] == 3, done
    _, topic = get(f"{cluster.console}/console/api/topics/{TOPIC}")
    assert topic["partitions"][deleted]["log_start_offset"] == 3

    status, refused = post(url, {"partition": PARTITIONS + 5, "before": 3})
    assert status == 404 and f"{TOPIC}-{PARTITIONS + 5}" in refused["error"], refused


def test_a_process_that_does_not_answer_is_named_and_nothing_is_half_done(cluster: Cluster) -> None:
    partitions = leaders(cluster)
    group, partition = cluster.groups[0], next(p for p, leader in partitions.items() if leader == 1)

    def committed() -> int:
        status, page = get(f"{cluster.console}/console/api/groups/{group}")
        assert status == 200, page
        return int({o["partition"]: o["committed"] for o in page["offsets"]}[partition])

    before = committed()
    os.kill(cluster.pids[1], signal.SIGSTOP)
    try:
        began = time.monotonic()
        status, body = get(f"{cluster.console}/console/api/groups")
        assert status == 503 and "broker 1 did not answer" in body["error"], body
        assert time.monotonic() - began < ANSWER_TIMEOUT_S + 5
        status, text = get(f"{cluster.console}/metrics")
        assert status == 503 and "broker 1" in text
        # The reset needs the stopped leader's bounds: refused before the coordinator commits.
        url = f"{cluster.console}/console/api/groups/{group}/reset-offsets"
        status, body = post(url, {"topic": TOPIC, "partition": partition, "to": 7})
        assert status == 503 and "broker 1" in body["error"], body
    finally:
        os.kill(cluster.pids[1], signal.SIGCONT)
    assert committed() == before != 7


def test_the_cluster_console_is_guarded_as_one_broker_console(cluster: Cluster) -> None:
    """The same guard (shim.web.http_guard) before every route: a foreign Host name (DNS
    rebinding), another site's Origin and a body that is not JSON are refused before any
    broker process is asked."""
    url = f"{cluster.console}/console/api/topics/{TOPIC}/delete-records"

    def send(headers: dict[str, str], body: bytes | None = None, method: str = "GET") -> tuple[int, str]:
        request = urllib.request.Request(
            url if body is not None else f"{cluster.console}/metrics", body, headers, method=method
        )
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                return response.status, response.headers.get("X-Content-Type-Options", "")
        except urllib.error.HTTPError as refused:
            return refused.code, refused.headers.get("X-Content-Type-Options", "")

    assert send({"Host": "rebound.example"}) == (421, "nosniff")
    json_post = {"Content-Type": "application/json", "Origin": "http://evil.example"}
    assert send(json_post, b'{"partition": 0, "before": 1}', "POST") == (403, "nosniff")
    assert send({"Content-Type": "text/plain"}, b"partition=0", "POST") == (415, "nosniff")
    status, topic = get(f"{cluster.console}/console/api/topics/{TOPIC}")
    assert status == 200 and all(p["log_start_offset"] in (0, 3) for p in topic["partitions"])


def test_over_tls_listeners_the_console_is_https_and_asks_a_sasl_login(tmp_path: Path) -> None:
    """As one process serves it: TLS with the first TLS listener's keystore, HTTP Basic login
    as a --user, checked as that user's SASL PLAIN login would be."""
    from kafka_shim.shim.security.dev_certs import DEFAULT_HOSTS, write_dev_certs

    certs = write_dev_certs(tmp_path / "certs", DEFAULT_HOSTS, "client", 2)
    listening = [
        "--listeners",
        "BOTH://127.0.0.1:0",
        "--config",
        "listener.security.protocol.map=BOTH:SASL_SSL",
    ]
    listening += ["--config", f"ssl.keystore.location={certs['broker']}", "--user", "alice:alice-pw"]
    with supervised(tmp_path / "data", *listening) as (_, console):
        assert console.startswith("https://")
        trusted = ssl.create_default_context(cafile=str(certs["ca"]))

        def overview(login: str | None) -> tuple[int, Any]:
            headers = (
                {}
                if login is None
                else {"Authorization": "Basic " + base64.b64encode(login.encode()).decode()}
            )
            request = urllib.request.Request(f"{console}/console/api/overview", headers=headers)
            try:
                with urllib.request.urlopen(request, timeout=30, context=trusted) as response:
                    return response.status, json.loads(response.read())
            except urllib.error.HTTPError as refused:
                return refused.code, refused.read().decode()

        assert overview(None) == (401, "log in as a SASL user")
        assert overview("alice:wrong") == (401, "invalid username or password")
        status, body = overview("alice:alice-pw")
        assert status == 200 and body["listeners"] == ["BOTH (SASL_SSL)"], body
        with pytest.raises((urllib.error.URLError, ConnectionError)):
            urllib.request.urlopen(
                console.replace("https://", "http://") + "/console/api/overview", timeout=10
            )


def test_acls_made_through_either_process_authorize_the_console(tmp_path: Path) -> None:
    """Under an authorizer the console asks as the one-process console does (User:ANONYMOUS
    on a PLAINTEXT listener), by the ACLs the processes share (the controller's file): an ACL
    made through the other process applies within a deadline, and its deletion too."""
    from confluent_kafka.admin import (
        AclBinding,
        AclBindingFilter,
        AclOperation,
        AclPermissionType,
        AdminClient,
        NewTopic,
        ResourcePatternType,
        ResourceType,
    )

    authorizer = f"authorizer.class.name={STANDARD_AUTHORIZER}"
    listening = ["--host", "127.0.0.1", "--port", "0", "--config", authorizer]
    listening += ["--config", "allow.everyone.if.no.acl.found=true"]
    with supervised(tmp_path / "data", *listening) as (supervisor, console):
        line = next(line for line in supervisor.output if "listening on" in line)
        controller, other = re.findall(r"(127\.0\.0\.1:\d+) \(broker \d\)", line)
        admin = AdminClient({"bootstrap.servers": controller})
        admin.create_topics([NewTopic("hidden", 1, 1), NewTopic("shown", 1, 1)])["hidden"].result(10)

        def acl(
            resource: ResourceType, name: str, operation: AclOperation, kind: AclPermissionType
        ) -> AclBinding:
            return AclBinding(
                resource, name, ResourcePatternType.LITERAL, "User:ANONYMOUS", "*", operation, kind
            )

        # ALL on the cluster (DeleteAcls asks ALTER once the cluster has an ACL), DESCRIBE denied.
        allow_all = acl(ResourceType.BROKER, "kafka-cluster", AclOperation.ALL, AclPermissionType.ALLOW)
        deny_topic = acl(ResourceType.TOPIC, "hidden", AclOperation.DESCRIBE, AclPermissionType.DENY)
        deny_cluster = acl(
            ResourceType.BROKER, "kafka-cluster", AclOperation.DESCRIBE, AclPermissionType.DENY
        )

        def until(check: Callable[[], Any], wanted: Any, what: str) -> None:
            deadline = time.monotonic() + 10
            while (found := check()) != wanted:
                assert time.monotonic() < deadline, f"{what}: {found}"
                time.sleep(0.05)

        def names() -> tuple[int, list[str]]:
            status, topics = get(f"{console}/console/api/topics")
            return status, sorted(t["name"] for t in topics if not t["internal"])

        # Every partition at once, from its leader: each process follows the catalog first.
        status, shown = get(f"{console}/console/api/topics/shown")
        assert status == 200 and len(shown["partitions"]) == 1, shown
        assert names() == (200, ["hidden", "shown"])
        other_admin = AdminClient({"bootstrap.servers": other})  # not the controller's process
        other_admin.create_acls([allow_all, deny_topic])[deny_topic].result(10)
        until(names, (200, ["shown"]), "the topic's DENY")
        other_admin.create_acls([deny_cluster])[deny_cluster].result(10)
        overview = f"{console}/console/api/overview"
        until(
            lambda: get(overview),
            (403, "User:ANONYMOUS may not DESCRIBE the cluster"),
            "the cluster's DENY",
        )
        for denial in (deny_topic, deny_cluster):
            exact = AclBindingFilter(
                denial.restype,
                denial.name,
                denial.resource_pattern_type,
                denial.principal,
                denial.host,
                denial.operation,
                denial.permission_type,
            )
            assert len(other_admin.delete_acls([exact])[exact].result(10)) == 1
        until(lambda: (get(overview)[0], names()), (200, (200, ["hidden", "shown"])), "the DENYs deleted")
