"""One broker and one Kafka Connect cluster for the dev-stack tests: JVM start-ups are the cost."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from pathlib import Path

import pytest

from compat.connect_cluster import ConnectWorker
from compat.targets import free_port
from kafka_shim.pytest_plugin import KafkaShim, start_broker

GROUP = "dev-stack-connect"
# A distributed worker as a team would run one beside a single dev broker, with the timings
# shortened so a departed worker's tasks move within seconds: Kafka's session timeout floor
# (group.min.session.timeout.ms, 6 s), a 1 s heartbeat, and no wait for the departed worker to
# come back (scheduled.rebalance.max.delay.ms, 5 min by default). Exactly-once source support
# (KIP-618) is on, so source tasks write records and offsets in one transaction, and sink
# consumers read committed records only.
WORKER_PROPERTIES = {
    "group.id": GROUP,
    "key.converter": "org.apache.kafka.connect.json.JsonConverter",
    "value.converter": "org.apache.kafka.connect.json.JsonConverter",
    "config.storage.topic": f"{GROUP}-configs",
    "offset.storage.topic": f"{GROUP}-offsets",
    "status.storage.topic": f"{GROUP}-status",
    "config.storage.replication.factor": "1",
    "offset.storage.replication.factor": "1",
    "status.storage.replication.factor": "1",
    "offset.flush.interval.ms": "500",
    "session.timeout.ms": "6000",
    "heartbeat.interval.ms": "1000",
    "scheduled.rebalance.max.delay.ms": "0",
    "exactly.once.source.support": "enabled",
    "consumer.isolation.level": "read_committed",
    "plugin.discovery": "service_load",
}


class ConnectCluster:
    """Workers joining one Connect group on the module's broker; each test adds what it needs."""

    def __init__(self, broker: KafkaShim, workdir: Path) -> None:
        self.broker = broker
        self.workdir = workdir
        self.workers: list[ConnectWorker] = []
        self._names = (f"worker-{n}" for n in itertools.count(1))

    def start_worker(self) -> ConnectWorker:
        properties = {"bootstrap.servers": self.broker.bootstrap, **WORKER_PROPERTIES}
        worker = ConnectWorker(self.workdir, next(self._names), free_port(), properties)
        self.workers.append(worker)
        worker.wait_ready()
        return worker

    def live(self) -> list[ConnectWorker]:
        return [worker for worker in self.workers if worker.process.poll() is None]

    def any_worker(self) -> ConnectWorker:
        """A running worker: one a test before left, else a new one."""
        live = self.live()
        return live[0] if live else self.start_worker()

    def logs(self) -> str:
        return "\n".join(f"--- {worker.name} ---\n{worker.tail()}" for worker in self.workers)


@pytest.fixture(scope="module")
def dev_broker() -> Iterator[KafkaShim]:
    shim = start_broker({}, {})
    yield shim
    shim.stop()


@pytest.fixture(scope="module")
def connect_cluster(
    dev_broker: KafkaShim, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[ConnectCluster]:
    cluster = ConnectCluster(dev_broker, tmp_path_factory.mktemp("connect"))
    try:
        yield cluster
    finally:
        for worker in cluster.workers:
            worker.kill()  # the tests are over: nothing to hand over, seconds saved
