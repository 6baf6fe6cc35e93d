"""A Kafka Connect worker across a kafka-shim restart on disk, then across its own restart.

A developer stops kafka-shim at night and starts it again on the same data directory: the
worker's connectors must go on where they were. Everything Connect keeps is in the broker:
connector configs (written by the leader in transactions, exactly-once source support being
on), source offsets and statuses in compacted topics, the sink's offsets in its consumer group,
the source task's transactional producer in the transaction log. The worker rides out the
broker's absence without a rebalance: as Kafka's coordinator does, the restarted broker loads
the worker group with its members, so its generation does not move (kafka-shim used to bring
groups back Empty: every member got UNKNOWN_MEMBER_ID and the workers rebalanced). The sink's
Java consumer sometimes rejoins by itself once it reconnects, under the member id the broker
kept; revoked, the sink task commits what it wrote first, so no line is written twice. A new worker
process, started after the first stops, reads its connectors back from the topics and resumes
them. The sink file holds exactly the source lines: each pause comes after the sink committed
what it wrote (at-least-once would otherwise allow the lines after its last commit twice).
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import Consumer, TopicPartition

from compat.connect_cluster import ConnectWorker, rest
from compat.targets import free_port
from kafka_shim.pytest_plugin import KafkaShim, start_broker
from tests.dev_stack.conftest import WORKER_PROPERTIES
from tests.dev_stack.test_connect_clients import (
    append_lines,
    create_file_connectors,
    file_lines,
    offsets,
    source_lines,
    status,
)
from tests.helpers import wait_until

pytestmark = [pytest.mark.clients, pytest.mark.slow]

TOPIC = "connect-kept-lines"


class RestartableBroker:
    """An in-process broker on a fixed port and data directory, stopped and started again."""

    def __init__(self, data_dir: Path) -> None:
        self.settings = {"port": free_port(), "data_dir": data_dir}
        self.shim: KafkaShim | None = start_broker({}, self.settings)
        self.bootstrap = self.shim.bootstrap

    def generations(self, *group_ids: str) -> dict[str, int | None]:
        """Each classic group's generation, None for a group the broker does not have."""
        shim = self.shim
        assert shim is not None

        def read() -> dict[str, int | None]:
            groups = {group_id: shim.broker.groups.group(group_id) for group_id in group_ids}
            return {group_id: None if g is None else g.generation_id for group_id, g in groups.items()}

        return shim.call(read)

    def journal(self, *group_ids: str) -> str:
        """What the broker's group journal (the console's timeline) saw of the groups."""
        shim = self.shim
        assert shim is not None
        return "\n".join(
            map(str, shim.call(lambda: [e for g in group_ids for e in shim.broker.group_journal.events(g)]))
        )

    def restart(self) -> None:
        self.stop()
        self.shim = start_broker({}, self.settings)

    def stop(self) -> None:
        if self.shim is not None:
            self.shim.stop()
            self.shim = None


@pytest.fixture
def restartable_broker(tmp_path: Path) -> Iterator[RestartableBroker]:
    broker = RestartableBroker(tmp_path / "data")
    try:
        yield broker
    finally:
        broker.stop()


def all_running(worker: ConnectWorker, names: tuple[str, ...]) -> bool:
    def running(answer: dict[str, Any]) -> bool:
        states = [answer.get("connector", {}).get("state"), *(t["state"] for t in answer.get("tasks", []))]
        return len(states) == 2 and set(states) == {"RUNNING"}

    return all(running(status(worker, name)) for name in names)


def sink_committed(worker: ConnectWorker, sink: str) -> int | None:
    committed = offsets(worker, (sink,))[sink]
    return int(committed[0]["offset"]["kafka_offset"]) if committed else None


def records_end(bootstrap: str, topic: str) -> int:
    """The offset after partition 0's last record: where a consumer that read every record
    stands (the exactly-once source's commit markers take offsets of their own)."""
    consumer = Consumer(
        {"bootstrap.servers": bootstrap, "group.id": "end-reader", "enable.partition.eof": True}
    )
    consumer.assign([TopicPartition(topic, 0, 0)])
    end = 0
    try:
        while True:
            message = consumer.poll(10.0)
            assert message is not None, f"no end of {topic} within 10 s"
            if message.error() is not None:
                return end
            end = (message.offset() or 0) + 1
    finally:
        consumer.close()


def deliver(
    worker: ConnectWorker,
    broker: RestartableBroker,
    connectors: tuple[str, str],
    files: tuple[Path, Path],
    lines: list[str],
) -> None:
    """Append the lines the sink file lacks and wait until the sink wrote them and committed
    the offsets past them."""
    append_lines(files[0], lines[len(file_lines(files[1])) :])
    wait_until(lambda: file_lines(files[1]) == lines, f"{len(lines)} lines in the sink file", deadline_s=60)
    end = records_end(broker.bootstrap, TOPIC)
    committed = partial(sink_committed, worker, connectors[1])
    wait_until(lambda: (committed() or 0) >= end, "the sink's offsets committed", deadline_s=30)


def test_connectors_go_on_across_a_broker_restart_and_a_worker_restart(
    restartable_broker: RestartableBroker, tmp_path: Path
) -> None:
    files = (tmp_path / "source.txt", tmp_path / "sink.txt")
    files[0].touch()
    properties = {"bootstrap.servers": restartable_broker.bootstrap, **WORKER_PROPERTIES}
    worker = ConnectWorker(tmp_path, "worker-1", free_port(), properties)
    lines = source_lines("restart", 45)
    try:
        worker.wait_ready()
        connectors = create_file_connectors(worker, "kept", TOPIC, files, {})
        deliver(worker, restartable_broker, connectors, files, lines[:15])

        group = WORKER_PROPERTIES["group.id"]
        before = restartable_broker.generations(group)
        restartable_broker.restart()
        deliver(worker, restartable_broker, connectors, files, lines[:30])
        after = restartable_broker.generations(group)
        assert after == before, (
            f"the workers rebalanced after the restart: {restartable_broker.journal(group)}"
        )

        worker.stop()
        worker = ConnectWorker(tmp_path, "worker-2", free_port(), properties)
        worker.wait_ready()
        wait_until(lambda: all_running(worker, connectors), "the connectors read back", deadline_s=60)
        deliver(worker, restartable_broker, connectors, files, lines)
        assert sorted(rest(f"{worker.url}/connectors")) == sorted(connectors)
    except AssertionError as exc:
        raise AssertionError(f"{exc}\n{worker.tail()}") from exc
    finally:
        worker.kill()
    assert file_lines(files[1]) == lines
