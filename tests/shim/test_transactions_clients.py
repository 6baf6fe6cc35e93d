"""Transactions with unmodified confluent-kafka (librdkafka) clients against a real
broker process on disk: commits and aborts as a read_committed consumer sees them,
zombie fencing, a silent producer aborted at its timeout, and a restart (clean and
kill -9) that keeps what was committed and aborts what was left open."""

from __future__ import annotations

import signal
import sys
import time
import uuid
from pathlib import Path

import pytest
from confluent_kafka import Consumer, KafkaException, Producer

from compat.targets import RunningBroker, launch

pytestmark = [pytest.mark.clients, pytest.mark.slow]


def start(data_dir: Path) -> RunningBroker:
    argv = [
        sys.executable,
        "-m",
        "kafka_shim",
        "--port",
        "0",
        "--data-dir",
        str(data_dir),
        "--log-level",
        "WARNING",
    ]
    return launch("shim", argv)


def producer(bootstrap: str, transactional_id: str, timeout_ms: int = 60_000) -> Producer:
    p = Producer(
        {
            "bootstrap.servers": bootstrap,
            "transactional.id": transactional_id,
            "transaction.timeout.ms": timeout_ms,
        }
    )
    p.init_transactions(30)
    return p


def transaction(p: Producer, topic: str, values: list[str], commit: bool = True) -> None:
    p.begin_transaction()
    for value in values:
        p.produce(topic, value=value.encode())
    if commit:
        p.commit_transaction(30)
    else:
        # librdkafka's abort purges what it has not sent yet: send first, so the aborted
        # records are in the log (for read_uncommitted to see).
        p.flush(30)
        p.abort_transaction(30)


def read_all(bootstrap: str, topic: str, isolation: str, expect: int, timeout_s: float = 20) -> list[str]:
    """Values of the topic's partition 0 from the start, until `expect` arrived (or the deadline)."""
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": f"reader-{uuid.uuid4().hex[:6]}",
            "auto.offset.reset": "earliest",
            "isolation.level": isolation,
            "enable.auto.commit": False,
        }
    )
    consumer.subscribe([topic])
    values: list[str] = []
    deadline = time.monotonic() + timeout_s
    try:
        while len(values) < expect and time.monotonic() < deadline:
            message = consumer.poll(0.2)
            if message is not None and message.error() is None:
                values.append((message.value() or b"").decode())
        # Nothing more arrives that should not (a short grace period).
        grace = time.monotonic() + 1
        while time.monotonic() < grace:
            message = consumer.poll(0.1)
            if message is not None and message.error() is None:
                values.append((message.value() or b"").decode())
    finally:
        consumer.close()
    return values


def test_read_committed_sees_only_committed_transactions(tmp_path: Path) -> None:
    topic = f"out-{uuid.uuid4().hex[:6]}"
    with start(tmp_path) as broker:
        p = producer(broker.bootstrap, "loop")
        for n in range(6):
            transaction(p, topic, [f"t{n}-{i}" for i in range(3)], commit=n % 3 != 1)
        p.flush(10)
        committed = [f"t{n}-{i}" for n in range(6) if n % 3 != 1 for i in range(3)]
        assert read_all(broker.bootstrap, topic, "read_committed", len(committed)) == committed
        assert len(read_all(broker.bootstrap, topic, "read_uncommitted", 18)) == 18


def test_a_second_producer_fences_the_first(tmp_path: Path) -> None:
    topic = f"out-{uuid.uuid4().hex[:6]}"
    with start(tmp_path) as broker:
        zombie = producer(broker.bootstrap, "same")
        transaction(zombie, topic, ["before"])
        successor = producer(broker.bootstrap, "same")
        with pytest.raises(KafkaException) as raised:
            transaction(zombie, topic, ["zombie"])
        assert raised.value.args[0].fatal()
        transaction(successor, topic, ["after"])
        assert read_all(broker.bootstrap, topic, "read_committed", 2) == ["before", "after"]


def test_a_silent_producer_is_aborted_at_its_timeout(tmp_path: Path) -> None:
    topic = f"out-{uuid.uuid4().hex[:6]}"
    with start(tmp_path) as broker:
        silent = producer(broker.bootstrap, "silent", timeout_ms=1500)
        silent.begin_transaction()
        silent.produce(topic, value=b"never")
        silent.flush(10)
        # Its open transaction holds the last stable offset until the coordinator aborts it;
        # then a later transaction's records become readable.
        other = producer(broker.bootstrap, "other")
        transaction(other, topic, ["later"])
        assert read_all(broker.bootstrap, topic, "read_committed", 1, timeout_s=15) == ["later"]
        with pytest.raises(KafkaException):
            silent.commit_transaction(10)


@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGKILL], ids=["clean", "killed"])
def test_a_restart_keeps_commits_and_aborts_what_was_open(tmp_path: Path, stop: int) -> None:
    topic = f"out-{uuid.uuid4().hex[:6]}"
    with start(tmp_path) as broker:
        p = producer(broker.bootstrap, "restarts", timeout_ms=2000)
        transaction(p, topic, ["kept"])
        p.begin_transaction()
        p.produce(topic, value=b"open")
        p.flush(10)
        broker.signal_and_wait(stop)
    with start(tmp_path) as broker:
        successor = producer(broker.bootstrap, "other")
        transaction(successor, topic, ["after"])
        assert read_all(broker.bootstrap, topic, "read_committed", 2, timeout_s=15) == ["kept", "after"]
