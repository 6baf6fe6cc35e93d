"""`--brokers 2 --process-per-broker` with real clients: a process per broker, each serving the
partitions it leads and the groups it coordinates; topics made through the controller and
followed by the other; what the processes do not share refused with Kafka's error codes; a
clean stop of every process."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from compat.targets import RunningBroker, launch
from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.storage.data_dir import CLEAN_SHUTDOWN_FILE
from tests.wire import WireClient

pytestmark = pytest.mark.clients

CREATE_TOPICS, FIND_COORDINATOR, INIT_PRODUCER_ID, METADATA = 19, 10, 22, 3
OFFSET_COMMIT, OFFSET_FETCH = 8, 9
TOPIC, PARTITIONS, RECORDS = "orders", 4, 200


@contextmanager
def processes(data_dir: Path, *extra: str) -> Iterator[tuple[RunningBroker, list[str]]]:
    """`--brokers 2 --process-per-broker` on `data_dir`: the supervisor, the brokers' addresses."""
    argv = [sys.executable, "-m", "kafka_shim", "--brokers", "2", "--process-per-broker", "--port", "0"]
    argv += ["--host", "127.0.0.1", "--data-dir", str(data_dir), "--log-level", "WARNING"]
    broker = launch("shim", [*argv, *extra], timeout_s=60)
    try:
        line = next(line for line in broker.output if "listening on" in line)
        yield broker, re.findall(r"(127\.0\.0\.1:\d+) \(broker \d\)", line)
    finally:
        broker.stop()


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[RunningBroker, list[str]]]:
    with processes(tmp_path_factory.mktemp("processes") / "data", "--console", "off") as started:
        yield started


def children(pid: int) -> list[int]:
    text = Path(f"/proc/{pid}/task/{pid}/children").read_text()
    return [int(child) for child in text.split()]


def test_each_broker_is_a_process_and_clients_use_both(cluster: tuple[RunningBroker, list[str]]) -> None:
    from confluent_kafka import Consumer, Producer, TopicPartition
    from confluent_kafka.admin import AdminClient, NewTopic

    broker, addresses = cluster
    assert broker.process is not None and len(children(broker.process.pid)) == 2
    bootstrap = ",".join(addresses)
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(TOPIC, PARTITIONS, 2)])[TOPIC].result(10)
    leaders = {p.id: p.leader for p in admin.list_topics(TOPIC, timeout=10).topics[TOPIC].partitions.values()}
    assert sorted(set(leaders.values())) == [0, 1]  # partitions led by either process

    producer = Producer({"bootstrap.servers": bootstrap, "enable.idempotence": True})
    for i in range(RECORDS):
        producer.produce(TOPIC, key=str(i), value=f"v{i}")
    assert producer.flush(15) == 0

    # Groups coordinated by either process commit and read back what they consumed.
    groups = ("g-a", "g-b", "g-c", "g-d")
    with WireClient(addresses[0], timeout_s=10) as connection:
        found = [connection.request(FIND_COORDINATOR, 3, {"key": group, "key_type": 0}) for group in groups]
    assert {f"{answer.host}:{answer.port}" for answer in found} == set(addresses)
    for group in groups:
        consumer = Consumer(
            {
                "bootstrap.servers": bootstrap,
                "group.id": group,
                "auto.offset.reset": "earliest",
                "enable.auto.commit": False,
            }
        )
        try:
            consumer.subscribe([TOPIC])
            values: set[bytes | None] = set()
            deadline = time.monotonic() + 20
            while len(values) < RECORDS and time.monotonic() < deadline:
                message = consumer.poll(0.5)
                if message is not None and message.error() is None:
                    values.add(message.value())
            assert len(values) == RECORDS, group
            consumer.commit(asynchronous=False)
            committed = consumer.committed([TopicPartition(TOPIC, p) for p in range(PARTITIONS)], timeout=10)
            assert sum(tp.offset for tp in committed) == RECORDS, group
        finally:
            consumer.close()


def test_topic_changes_go_to_the_controller_and_the_others_follow(
    cluster: tuple[RunningBroker, list[str]],
) -> None:
    _, (controller, follower) = cluster
    name = f"t-{uuid.uuid4().hex[:8]}"
    create = {
        "topics": [
            {"name": name, "num_partitions": 2, "replication_factor": -1, "assignments": [], "configs": []}
        ],
        "timeout_ms": 10_000,
        "validate_only": False,
    }
    with WireClient(follower) as client:
        answer = client.request(CREATE_TOPICS, 7, create)
        assert answer.topics[0].error_code == ErrorCode.NOT_CONTROLLER
    with WireClient(controller) as client:
        answer = client.request(CREATE_TOPICS, 7, create)
        assert answer.topics[0].error_code == ErrorCode.NONE
        created_id = answer.topics[0].topic_id
    metadata = {
        "topics": [{"topic_id": uuid.UUID(int=0), "name": name}],
        "allow_auto_topic_creation": False,
        "include_topic_authorized_operations": False,
    }
    with WireClient(follower) as client:  # the follower answers with the controller's topic
        answer = client.request(METADATA, 12, metadata)
    assert answer.topics[0].error_code == ErrorCode.NONE
    assert answer.topics[0].topic_id == created_id and len(answer.topics[0].partitions) == 2


def test_a_topic_auto_created_through_a_non_controller_is_made_by_the_controller(
    cluster: tuple[RunningBroker, list[str]],
) -> None:
    from confluent_kafka import Producer

    _, (_, follower) = cluster
    producer = Producer({"bootstrap.servers": follower})  # only the follower answers Metadata
    for i in range(10):
        producer.produce(f"auto-{uuid.uuid4().hex[:8]}", value=b"v%d" % i)
    assert producer.flush(15) == 0


def java(command: Any) -> list[dict[str, Any]]:
    """The Java client's events for `command` (compat/java's driver)."""
    from compat import java_build

    try:
        argv = java_build.driver_command_line(command.to_json())
    except java_build.JavaDriverUnavailable as exc:
        pytest.fail(f"the Java driver is needed (bash .ci/run builds it): {exc}")
    done = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr[-2000:]
    return [json.loads(line) for line in done.stdout.splitlines()]


@pytest.mark.parametrize("protocol", ["classic", "consumer"])
def test_the_java_client_creates_produces_and_consumes(
    cluster: tuple[RunningBroker, list[str]], protocol: str
) -> None:
    """kafka-clients 4.x: the admin client finds the controller, the (idempotent) producer and
    the consumer reach the leaders of both processes, the group (classic or KIP-848) commits."""
    from compat.schema import Command

    _, addresses = cluster
    topic, count = f"java-{protocol}", 60
    common = {"bootstrap": ",".join(addresses), "topic": topic, "partitions": PARTITIONS}
    java(Command(op="create_topic", **common))  # type: ignore[arg-type]
    produced = java(Command(op="produce", count=count, **common))  # type: ignore[arg-type]
    assert [e["event"] for e in produced][-1] == "produced"
    consume = Command(op="consume", count=count, group=f"g-{topic}", group_protocol=protocol, **common)  # type: ignore[arg-type]
    events = java(consume)
    assert len([e for e in events if e["event"] == "message"]) == count
    committed = next(e for e in events if e["event"] == "committed")["offsets"]
    assert sum(committed.values()) == count


def test_what_the_processes_do_not_share_is_refused(cluster: tuple[RunningBroker, list[str]]) -> None:
    _, addresses = cluster
    ids = []
    for address in addresses:
        with WireClient(address) as client:

            def init(transactional_id: str | None) -> Any:
                body = {"transactional_id": transactional_id, "transaction_timeout_ms": 60_000}
                return client.request(INIT_PRODUCER_ID, 4, body | {"producer_id": -1, "producer_epoch": -1})

            answer = init(None)  # an idempotent producer's id
            assert answer.error_code == ErrorCode.NONE
            ids.append(answer.producer_id)
    # Each process hands out ids of its own residue: no two producers share one.
    assert sorted(producer_id % 2 for producer_id in ids) == [0, 1]


def test_a_signal_stops_every_process(tmp_path: Path) -> None:
    argv = [sys.executable, "-m", "kafka_shim", "--brokers", "2", "--process-per-broker", "--port", "0"]
    argv += ["--host", "127.0.0.1", "--data-dir", str(tmp_path / "data"), "--console", "off"]
    broker = launch("shim", argv, timeout_s=60)
    assert broker.process is not None
    processes = children(broker.process.pid)
    broker.process.send_signal(signal.SIGTERM)
    assert broker.process.wait(15) == 0
    broker.stop()
    assert not [pid for pid in processes if Path(f"/proc/{pid}").exists()]
    # Each stopped cleanly: its data directory is marked so.
    assert all((tmp_path / "data" / f"broker-{n}" / CLEAN_SHUTDOWN_FILE).exists() for n in (0, 1))


def test_what_it_cannot_serve_is_refused_at_start(tmp_path: Path) -> None:
    for extra, reason in (
        (["--brokers", "1"], "--brokers N of 2 or more"),
        (["--brokers", "2", "--memory"], "--memory is not supported"),
        (["--brokers", "2", "--control"], "no control endpoint"),
    ):
        argv = [sys.executable, "-m", "kafka_shim", "--process-per-broker", "--port", "0", *extra]
        if "--memory" not in extra:
            argv += ["--data-dir", str(tmp_path / "data")]
        done = subprocess.run(argv, capture_output=True, text=True, timeout=60)
        assert done.returncode == 2 and reason in done.stderr, done.stderr


def coordinator(address: str, group: str) -> str:
    with WireClient(address, timeout_s=10) as client:
        found = client.request(FIND_COORDINATOR, 3, {"key": group, "key_type": 0})
    assert found.error_code == ErrorCode.NONE
    return f"{found.host}:{found.port}"


def test_a_restart_keeps_every_group_where_its_offsets_are(tmp_path: Path) -> None:
    """Offsets committed while __consumer_offsets had one partition, made by one process only
    (as before groups were spread over the processes): after a restart without the setting
    both processes name the same coordinator for each group, and it has the offsets."""
    data_dir, topic, groups = tmp_path / "data", "kept", [f"g-{n}" for n in range(4)]
    partition = {"partition_index": 0, "committed_offset": 7, "committed_metadata": ""}
    with processes(data_dir, "--console", "off", "--config", "offsets.topic.num.partitions=1") as started:
        _, (controller, _) = started
        with WireClient(controller, timeout_s=10) as client:
            create = {
                "name": topic,
                "num_partitions": 1,
                "replication_factor": -1,
                "assignments": [],
                "configs": [],
            }
            answer = client.request(
                CREATE_TOPICS, 7, {"topics": [create], "timeout_ms": 10_000, "validate_only": False}
            )
            assert answer.topics[0].error_code == ErrorCode.NONE
        for group in groups:
            commit = {
                "group_id": group,
                "generation_id_or_member_epoch": -1,
                "member_id": "",
                "group_instance_id": None,
            }
            commit["topics"] = [{"name": topic, "partitions": [partition]}]
            with WireClient(coordinator(controller, group), timeout_s=10) as client:
                answer = client.request(OFFSET_COMMIT, 8, commit)
            assert answer.topics[0].partitions[0].error_code == ErrorCode.NONE
    assert not (data_dir / "broker-1" / "__consumer_offsets-0").exists()  # broker 1 made none
    with processes(data_dir, "--console", "off") as (_, (controller, follower)):
        for group in groups:
            where = coordinator(controller, group)
            assert coordinator(follower, group) == where
            fetch = {
                "group_id": group,
                "topics": [{"name": topic, "partition_indexes": [0]}],
                "require_stable": False,
            }
            with WireClient(where, timeout_s=10) as client:
                answer = client.request(OFFSET_FETCH, 7, fetch)
            assert answer.topics[0].partitions[0].committed_offset == 7, group
