"""Kafka Connect 4.3.0 distributed workers against kafka-shim (compat/connect_cluster.py).

Two workers in one Connect group, a FileStreamSource and a FileStreamSink connector made
through the REST API, records through Connect's JsonConverter. The second worker joining
takes one of the two tasks (incremental cooperative rebalancing); the worker running the
source task is then killed with SIGKILL while its transaction holds records, and the other
takes its task over.

What Connect guarantees, and so what is asserted: with exactly-once source support on, the
source task writes its records and file offsets in one transaction, and a task taking over
fences its predecessor's transactional id (Admin.fenceProducers), which aborts the open
transaction, before reading the offsets; so the records the killed task wrote are in the log
twice, and a read_committed reader sees every line exactly once. The sink is at-least-once: a
sink task whose worker dies gets its uncommitted records again. Here the sink task's worker
lives, and a sink task moved by a rebalance commits before it is revoked, so the sink file
holds exactly the source lines, in order.
"""

from __future__ import annotations

import json
import time
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import Consumer, KafkaError, TopicPartition
from confluent_kafka.schema_registry import SchemaRegistryClient
from confluent_kafka.schema_registry.avro import AvroDeserializer
from confluent_kafka.serialization import MessageField, SerializationContext

from compat.connect_cluster import ConnectWorker, RestError, rest
from kafka_shim.pytest_plugin import KafkaShim
from tests.dev_stack.conftest import ConnectCluster
from tests.helpers import wait_until

pytestmark = [pytest.mark.clients, pytest.mark.slow]

MOVE_DEADLINE_S = 60.0  # a rebalance after a 6 s session timeout, JVMs on 2 shared cores
# The JSON source commits its transaction at most every 5 s (transaction.boundary=interval), so
# records appended right after a commit stay in an open transaction for 5 s: the window in
# which the test kills their worker.
TRANSACTION_INTERVAL = {"transaction.boundary": "interval", "transaction.boundary.interval.ms": "5000"}


def create_connector(worker: ConnectWorker, name: str, config: dict[str, str]) -> None:
    """POST /connectors, retried while the group rebalances (Connect answers 409 then)."""
    deadline = time.monotonic() + MOVE_DEADLINE_S
    while True:
        try:
            rest(f"{worker.url}/connectors", "POST", {"name": name, "config": config}, timeout_s=30.0)
            return
        except RestError as exc:
            if exc.status not in (409, 500, 503) or time.monotonic() > deadline:
                raise
        time.sleep(0.5)


def status(worker: ConnectWorker, name: str) -> dict[str, Any]:
    try:
        answer: dict[str, Any] = rest(f"{worker.url}/connectors/{name}/status")
    except (OSError, RestError):
        return {}
    return answer


def running_task_worker(worker: ConnectWorker, name: str) -> str | None:
    """The worker id running task 0 of `name`, when it runs."""
    tasks = status(worker, name).get("tasks", [])
    return tasks[0]["worker_id"] if tasks and tasks[0]["state"] == "RUNNING" else None


def append_lines(path: Path, lines: list[str]) -> None:
    with path.open("a", encoding="utf-8") as file:
        file.writelines(line + "\n" for line in lines)


def file_lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines() if path.exists() else []


def topic_values(bootstrap: str, topic: str, expected: int, isolation: str = "read_committed") -> list[bytes]:
    """Every record value of partition 0 a consumer at `isolation` sees, up to the end it reads
    to (the last stable offset for read_committed) once at least `expected` were read."""
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": f"{topic}-reader",
            "isolation.level": isolation,
            "enable.partition.eof": True,
            "enable.auto.commit": False,
        }
    )
    consumer.assign([TopicPartition(topic, 0, 0)])
    values: list[bytes] = []
    deadline = time.monotonic() + 30.0
    try:
        while time.monotonic() < deadline:
            message = consumer.poll(0.5)
            if message is None:
                continue
            error = message.error()
            if error is None:
                values.append(message.value() or b"")
            elif error.code() != KafkaError._PARTITION_EOF:
                raise AssertionError(f"consumer error: {error}")
            elif len(values) >= expected:
                break
    finally:
        consumer.close()
    return values


def json_payload(value: bytes) -> str:
    """A string JsonConverter wrote, its schema envelope checked and unwrapped."""
    envelope = json.loads(value)
    assert envelope["schema"] == {"type": "string", "optional": False}
    payload: str = envelope["payload"]
    return payload


def create_file_connectors(
    worker: ConnectWorker,
    prefix: str,
    topic: str,
    files: tuple[Path, Path],
    overrides: dict[str, str],
    source_overrides: dict[str, str] | None = None,
) -> tuple[str, str]:
    """A FileStreamSource (exactly-once required) from files[0] into `topic` and a
    FileStreamSink from it into files[1], with connector-level `overrides` (converters)."""
    source_name, sink_name = f"{prefix}-file-source", f"{prefix}-file-sink"
    source = {
        "connector.class": "org.apache.kafka.connect.file.FileStreamSourceConnector",
        "tasks.max": "1",
        "file": str(files[0]),
        "topic": topic,
        "exactly.once.support": "required",  # refused unless the connector and worker can
    }
    sink = {
        "connector.class": "org.apache.kafka.connect.file.FileStreamSinkConnector",
        "tasks.max": "1",
        "file": str(files[1]),
        "topics": topic,
    }
    create_connector(worker, source_name, {**source, **overrides, **(source_overrides or {})})
    create_connector(worker, sink_name, {**sink, **overrides})
    return source_name, sink_name


def transaction_open(broker: KafkaShim, topic: str) -> bool:
    """Partition 0 holds records of a transaction not yet committed or aborted."""

    def check() -> bool:
        log = broker.broker.topics.partition(topic, 0)
        return log is not None and log.last_stable_offset < log.high_watermark

    return broker.call(check)


def kill_inside_a_transaction(
    broker: KafkaShim, topic: str, source_file: Path, lines: list[str], victim: ConnectWorker
) -> list[str]:
    """Kill `victim` while its source task's open transaction holds records: append half a batch
    and wait for its commit (the interval's clock starts again), append the other half and kill
    as soon as it is in the log uncommitted. The half killed in its transaction is returned; a
    machine too slow to see it open within the interval tries again with the next batch."""

    def stable_past(end: int) -> bool:
        log = broker.broker.topics.partition(topic, 0)
        return log is not None and log.high_watermark > end and log.last_stable_offset == log.high_watermark

    for start in range(0, len(lines), 30):
        first, second = lines[start : start + 15], lines[start + 15 : start + 30]
        end = broker.call(lambda: broker.broker.topics.partition(topic, 0).high_watermark)  # type: ignore[union-attr]
        append_lines(source_file, first)
        wait_until(partial(broker.call, partial(stable_past, end)), "a batch committed", deadline_s=30)
        append_lines(source_file, second)
        deadline = time.monotonic() + 4.0  # within the 5 s interval
        while time.monotonic() < deadline:
            if transaction_open(broker, topic):
                victim.kill()
                assert transaction_open(broker, topic), "committed between the look and the kill"
                return second
            time.sleep(0.02)
    raise AssertionError("no source transaction was seen open in any try")


def source_lines(kind: str, count: int) -> list[str]:
    # ASCII only: FileStreamSourceTask records its offset in characters read but resumes by
    # skipping that many bytes, so a restarted task lands mid-line after multi-byte characters.
    return [f'{n:04d} an {kind} line with "quotes" and \\ slashes' for n in range(count)]


def test_file_stream_connectors_rebalance_and_survive_a_killed_worker(
    connect_cluster: ConnectCluster, dev_broker: KafkaShim, tmp_path: Path
) -> None:
    topic = "connect-json-lines"
    source_file, sink_file = tmp_path / "source.txt", tmp_path / "sink.txt"
    source_file.touch()
    dev_broker.create_topic(topic, 1)
    first = connect_cluster.any_worker()
    source_name, sink_name = create_file_connectors(
        first, "json", topic, (source_file, sink_file), {}, TRANSACTION_INTERVAL
    )
    lines = source_lines("json", 150)  # 60, then up to three tries of 30 at the kill
    try:
        append_lines(source_file, lines[:30])
        wait_until(
            lambda: file_lines(sink_file) == lines[:30], "the first lines in the sink file", deadline_s=60
        )

        second = connect_cluster.start_worker()
        both = {first.worker_id, second.worker_id}

        def spread() -> bool:
            placed = {running_task_worker(second, source_name), running_task_worker(second, sink_name)}
            return placed == both

        wait_until(spread, "the two tasks on the two workers", deadline_s=MOVE_DEADLINE_S)
        append_lines(source_file, lines[30:60])
        wait_until(lambda: file_lines(sink_file) == lines[:60], "lines after the rebalance", deadline_s=60)

        source_worker_id = running_task_worker(second, source_name)
        victim, survivor = (first, second) if source_worker_id == first.worker_id else (second, first)
        aborted = kill_inside_a_transaction(dev_broker, topic, source_file, lines[60:], victim)
        lines = file_lines(source_file)  # what was written, up to the killed transaction's lines
        wait_until(
            lambda: running_task_worker(survivor, source_name) == survivor.worker_id,
            "the source task running on the surviving worker",
            deadline_s=MOVE_DEADLINE_S,
        )
        wait_until(
            lambda: len(file_lines(sink_file)) >= len(lines), "every line in the sink file", deadline_s=60
        )
    except AssertionError as exc:
        raise AssertionError(f"{exc}\n{connect_cluster.logs()}") from exc
    assert file_lines(sink_file) == lines
    values = topic_values(dev_broker.bootstrap, topic, len(lines))
    assert [json_payload(value) for value in values] == lines
    # The aborted transaction's records stay in the log, skipped by read_committed readers.
    everything = topic_values(dev_broker.bootstrap, topic, len(lines) + len(aborted), "read_uncommitted")
    assert [json_payload(value) for value in everything] == lines + aborted


def test_file_stream_connectors_through_avro_converter_and_the_built_in_registry(
    connect_cluster: ConnectCluster, dev_broker: KafkaShim, tmp_path: Path
) -> None:
    """Confluent's AvroConverter 7.0.16 registers the value schema in kafka-shim's registry and
    writes Confluent's wire format (magic byte, schema id, Avro); confluent-kafka's
    AvroDeserializer reads what Java wrote, through the same registry."""
    topic = "connect-avro-lines"
    source_file, sink_file = tmp_path / "source.txt", tmp_path / "sink.txt"
    source_file.touch()
    dev_broker.create_topic(topic, 1)
    registry_url = dev_broker.schema_registry_url
    worker = connect_cluster.any_worker()
    avro = {
        f"{side}.converter{setting}": value
        for side in ("key", "value")
        for setting, value in (
            ("", "io.confluent.connect.avro.AvroConverter"),
            (".schema.registry.url", registry_url),
        )
    }
    names = create_file_connectors(worker, "avro", topic, (source_file, sink_file), avro)
    lines = source_lines("avro", 40)
    try:
        append_lines(source_file, lines)
        wait_until(lambda: file_lines(sink_file) == lines, "every line in the sink file", deadline_s=60)
    except AssertionError as exc:
        raise AssertionError(f"{exc}\n{connect_cluster.logs()}") from exc
    finally:
        for name in names:  # the cluster goes on to the module's other tests as it was
            rest(f"{worker.url}/connectors/{name}", "DELETE", timeout_s=30.0)
    registry = SchemaRegistryClient({"url": registry_url})
    registered = registry.get_latest_version(f"{topic}-value")
    assert registered.schema_id is not None and registered.schema.schema_str is not None
    assert json.loads(registered.schema.schema_str) == "string"
    deserialize = AvroDeserializer(registry)
    context = SerializationContext(topic, MessageField.VALUE)
    values = topic_values(dev_broker.bootstrap, topic, len(lines))
    assert {value[1:5] for value in values} == {registered.schema_id.to_bytes(4, "big")}
    assert [deserialize(value, context) for value in values] == lines


def offsets(worker: ConnectWorker, names: tuple[str, ...]) -> dict[str, Any]:
    return {name: rest(f"{worker.url}/connectors/{name}/offsets")["offsets"] for name in names}


def connector_state(worker: ConnectWorker, name: str) -> str | None:
    return status(worker, name).get("connector", {}).get("state")


def test_connector_offsets_read_altered_and_reset_through_the_rest_api(
    connect_cluster: ConnectCluster, dev_broker: KafkaShim, tmp_path: Path
) -> None:
    """KIP-875's offset management on stopped connectors: the sink's offsets are its consumer
    group's (altered through the Admin API), the exactly-once source's live in the offsets topic
    (reset after fencing the task's transactional id). Resumed, the sink replays from where it
    was moved back to, and the reset source reads its file again from the start."""
    topic = "connect-managed-lines"
    source_file, sink_file = tmp_path / "source.txt", tmp_path / "sink.txt"
    source_file.touch()
    dev_broker.create_topic(topic, 1)
    worker = connect_cluster.any_worker()
    source, sink = create_file_connectors(worker, "managed", topic, (source_file, sink_file), {})
    lines = source_lines("managed", 20)
    try:
        append_lines(source_file, lines)
        wait_until(lambda: file_lines(sink_file) == lines, "every line in the sink file", deadline_s=60)
        read = sum(len(line) + 1 for line in lines)  # the source's position: bytes of ASCII lines
        committed = {
            sink: [
                {"partition": {"kafka_topic": topic, "kafka_partition": 0}, "offset": {"kafka_offset": 20}}
            ],
            source: [{"partition": {"filename": str(source_file)}, "offset": {"position": read}}],
        }
        wait_until(
            lambda: offsets(worker, (source, sink)) == committed, "the offsets committed", deadline_s=30
        )
        for name in (source, sink):
            rest(f"{worker.url}/connectors/{name}/stop", "PUT", timeout_s=30.0)
        stopped = {source: "STOPPED", sink: "STOPPED"}
        wait_until(
            lambda: {n: connector_state(worker, n) for n in stopped} == stopped, "stopped", deadline_s=30
        )
        moved_back = {
            "partition": {"kafka_topic": topic, "kafka_partition": 0},
            "offset": {"kafka_offset": 15},
        }
        rest(f"{worker.url}/connectors/{sink}/offsets", "PATCH", {"offsets": [moved_back]}, timeout_s=30.0)
        assert rest(f"{worker.url}/connectors/{sink}/offsets")["offsets"] == [moved_back]
        rest(f"{worker.url}/connectors/{source}/offsets", "DELETE", timeout_s=30.0)
        assert rest(f"{worker.url}/connectors/{source}/offsets")["offsets"] == []
        for name in (source, sink):
            rest(f"{worker.url}/connectors/{name}/resume", "PUT", timeout_s=30.0)
        expected = lines + lines[15:] + lines
        wait_until(lambda: file_lines(sink_file) == expected, "the replayed lines", deadline_s=60)
    except AssertionError as exc:
        raise AssertionError(f"{exc}\n{connect_cluster.logs()}") from exc
    finally:
        for name in (source, sink):
            rest(f"{worker.url}/connectors/{name}", "DELETE", timeout_s=30.0)
    assert [json_payload(value) for value in topic_values(dev_broker.bootstrap, topic, 40)] == lines + lines
