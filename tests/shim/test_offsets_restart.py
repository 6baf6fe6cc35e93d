"""Committed offsets survive a restart: through the broker's own write path
(the coordinator's records appended to `__consumer_offsets`) and its recovery
path (replaying the topic at start-up).

In memory, a second coordinator is loaded from the first broker's offsets log.
On disk, a real `python -m shim --data-dir` process is stopped (cleanly, or
killed) and started again, and kafka-python consumers resume exactly at their
committed offsets.
"""

from __future__ import annotations

import signal
import sys
import time
import uuid
from pathlib import Path

import pytest

from compat.targets import RunningBroker, launch
from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.shim.broker import Broker
from kafka_shim.shim.config.broker_config import BrokerConfig
from kafka_shim.shim.coordinator.coordinator import GroupCoordinator
from kafka_shim.shim.coordinator.state import GroupState
from kafka_shim.shim.coordinator.types import CommitRequest, OffsetCommit, TopicPartition
from kafka_shim.storage.offsets_log import OFFSETS_TOPIC
from tests.helpers import FakeClock

TP = TopicPartition("orders", 0)


def test_a_memory_broker_log_replays_into_a_fresh_coordinator() -> None:
    clock = FakeClock()
    broker = Broker(BrokerConfig(data_dir=None, offsets_topic_num_partitions=50), clock=clock)
    for offset in (3, 7, 12):
        request = CommitRequest("g", {TP: OffsetCommit(offset, metadata=f"m{offset}")})
        assert broker.group_service.effects.apply(broker.groups.commit_offsets(request, clock())) == {
            TP: ErrorCode.NONE
        }
        clock.now += 1_000
    broker.group_service.effects.apply(
        broker.groups.commit_offsets(CommitRequest("gone", {TP: OffsetCommit(1)}), clock())
    )
    broker.group_service.effects.apply(broker.groups.delete_groups(["gone"], clock()))
    topic = broker.topics.get(OFFSETS_TOPIC)
    assert topic is not None and len(topic.partitions) == 50
    assert sum(p.log_end_offset for p in topic.partitions) == 6  # 3 commits + commit, tombstones

    restarted = GroupCoordinator()
    restarted.load(broker.group_service.offsets_log.replay(), clock())
    fetched = restarted.fetch_offsets("g", [TP])[TP]
    assert (fetched.offset, fetched.metadata) == (12, "m12")
    group = restarted.group("g")
    assert group is not None and group.state == GroupState.EMPTY
    assert restarted.group("gone") is None


# --- a real process on disk ---------------------------------------------------------------


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


def produce(bootstrap: str, topic: str, count: int) -> None:
    from kafka import KafkaProducer

    producer = KafkaProducer(bootstrap_servers=bootstrap)
    for i in range(count):
        producer.send(topic, value=f"m{i}".encode())
    producer.flush()
    producer.close()


def consume(bootstrap: str, topic: str, group: str, count: int) -> list[int]:
    """Offsets of the next `count` messages the group reads, committed synchronously."""
    from kafka import KafkaConsumer

    consumer = KafkaConsumer(
        topic,
        bootstrap_servers=bootstrap,
        group_id=group,
        auto_offset_reset="earliest",
        enable_auto_commit=False,
        max_poll_records=1,
    )
    offsets: list[int] = []
    deadline = time.monotonic() + 30
    try:
        while len(offsets) < count and time.monotonic() < deadline:
            for records in consumer.poll(500, max_records=count - len(offsets)).values():
                offsets += [r.offset for r in records]
        consumer.commit()
    finally:
        consumer.close(autocommit=False)
    return offsets


@pytest.mark.clients
@pytest.mark.slow
@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGKILL], ids=["clean", "killed"])
def test_consumers_resume_at_their_commits_after_a_process_restart(tmp_path: Path, stop: int) -> None:
    topic, group = f"orders-{uuid.uuid4().hex[:6]}", "resumers"
    with start(tmp_path) as broker:
        produce(broker.bootstrap, topic, 10)
        assert consume(broker.bootstrap, topic, group, 4) == [0, 1, 2, 3]
        broker.signal_and_wait(stop)
    with start(tmp_path) as broker:
        assert consume(broker.bootstrap, topic, group, 6) == [4, 5, 6, 7, 8, 9]
        produce(broker.bootstrap, topic, 2)
    with start(tmp_path) as broker:
        assert consume(broker.bootstrap, topic, group, 2) == [10, 11]
