"""The test broker with real clients: a commit answered REBALANCE_IN_PROGRESS once, a produce
answered NOT_LEADER_OR_FOLLOWER twice under an idempotent producer, a produce's answer dropped
after its write (idempotent: written once; not: the retry duplicates it), a member's session expired
by advancing the broker's clock, and the same rules set from kafkajs over the control endpoint."""

from __future__ import annotations

import json
import shutil
import subprocess
import time
import uuid

import pytest
from confluent_kafka import Consumer, KafkaException, Producer
from kafka.record.memory_records import MemoryRecords

from compat.drivers import COMPAT_DIR
from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.shim.server import BrokerThread
from tests.helpers import wait_until

pytestmark = pytest.mark.clients
TIMEOUT_S = 20


@pytest.fixture
def broker(faults_broker: BrokerThread) -> BrokerThread:
    return faults_broker


def new_topic(broker: BrokerThread, partitions: int = 1) -> str:
    name = f"t-{uuid.uuid4().hex[:8]}"
    broker.call(lambda: broker.broker.topics.create(name, partitions, {}))
    return name


def produce(broker: BrokerThread, topic: str, count: int, **config: object) -> None:
    producer = Producer({"bootstrap.servers": broker.bootstrap, "linger.ms": 0, **config})
    failures: list[object] = []
    for index in range(count):
        producer.produce(topic, str(index).encode(), on_delivery=lambda err, _: failures.append(err))
        producer.flush(TIMEOUT_S)  # one batch each: every produce request meets the rule
    assert failures == [None] * count


def values(broker: BrokerThread, topic: str) -> list[bytes]:
    def read() -> list[bytes]:
        log = broker.broker.topics.partition(topic, 0)
        assert log is not None
        records, out = MemoryRecords(log.read(0, 1 << 20)), []
        while (batch := records.next_batch()) is not None:
            out += [record.value for record in batch]
        return out

    return broker.call(read)


def test_a_commit_answered_rebalance_in_progress_once_and_the_application_recovers(
    broker: BrokerThread,
) -> None:
    topic, group = new_topic(broker), f"g-{uuid.uuid4().hex[:8]}"
    produce(broker, topic, 3)
    consumer = Consumer(
        {
            "bootstrap.servers": broker.bootstrap,
            "group.id": group,
            "auto.offset.reset": "earliest",
            "enable.auto.commit": False,
        }
    )
    try:
        consumer.subscribe([topic])
        seen = 0
        deadline = time.monotonic() + TIMEOUT_S
        while seen < 3 and time.monotonic() < deadline:
            message = consumer.poll(0.2)
            seen += message is not None and message.error() is None
        broker.add_fault(api="OffsetCommit", group=group, error="REBALANCE_IN_PROGRESS", times=1)
        with pytest.raises(KafkaException) as refused:
            consumer.commit(asynchronous=False)
        assert refused.value.args[0].code() == ErrorCode.REBALANCE_IN_PROGRESS

        # The application's recovery: keep polling (the client rejoins if it must) and commit again.
        def committed() -> bool:
            consumer.poll(0.05)
            try:
                consumer.commit(asynchronous=False)
            except KafkaException:
                return False
            return True

        wait_until(committed, "the commit went through after the rebalance", deadline_s=TIMEOUT_S)
    finally:
        consumer.close()
    assert broker.call(lambda: broker.broker.groups.fetch_offsets(group, None))
    assert [entry.fault_rule is not None for entry in broker.requests(api="OffsetCommit", group=group)][
        :1
    ] == [True]


def test_an_idempotent_producer_answered_not_leader_twice_loses_and_duplicates_nothing(
    broker: BrokerThread,
) -> None:
    topic = new_topic(broker)
    rule = broker.add_fault(api="Produce", topic=topic, error="NOT_LEADER_OR_FOLLOWER", times=2)
    produce(broker, topic, 20, **{"enable.idempotence": True, "acks": "all", "retry.backoff.ms": 10})
    assert values(broker, topic) == [str(index).encode() for index in range(20)]
    assert [each["fired"] for each in broker.faults() if each["id"] == rule] == [2]


@pytest.mark.parametrize(
    ("idempotent", "written"), [(True, [b"0", b"1", b"2"]), (False, [b"0", b"0", b"1", b"2"])]
)
def test_a_produce_whose_answer_is_dropped_after_the_write_is_retried(
    broker: BrokerThread, idempotent: bool, written: list[bytes]
) -> None:
    """The write stands and the client never hears of it: an idempotent producer's retry is
    recognised by its sequence number; a plain producer's is written again."""
    topic = new_topic(broker)
    rule = broker.add_fault(api="Produce", topic=topic, action="drop_answer", times=1)
    produce(broker, topic, 3, **{"enable.idempotence": idempotent, "acks": "all", "retry.backoff.ms": 10})
    assert values(broker, topic) == written
    dropped = [entry for entry in broker.requests(api="Produce", topic=topic) if entry.fault_rule == rule]
    assert len(dropped) == 1 and dropped[0].response is not None  # handled and recorded, not answered


def test_a_session_expired_by_advancing_the_clock_is_reassigned_within_100_ms(broker: BrokerThread) -> None:
    topic, group = new_topic(broker, partitions=2), f"g-{uuid.uuid4().hex[:8]}"

    def member(name: str) -> Consumer:
        consumer = Consumer(
            {
                "bootstrap.servers": broker.bootstrap,
                "group.id": group,
                "client.id": name,
                "session.timeout.ms": 6000,
                "heartbeat.interval.ms": 10,
                "partition.assignment.strategy": "range",
            }
        )
        consumer.subscribe([topic])
        return consumer

    stays, goes = member("stays"), member("goes")
    try:

        def both_assigned() -> bool:
            stays.poll(0.05)
            goes.poll(0.05)
            return len(stays.assignment()) == 1 and len(goes.assignment()) == 1

        wait_until(both_assigned, "each member owns one partition", deadline_s=TIMEOUT_S)
        broker.add_fault(client_id="goes", action="close")  # cut off: its session lapses unseen
        started = time.monotonic()
        broker.advance_clock(7)  # past session.timeout.ms, in no time
        while len(stays.assignment()) < 2 and time.monotonic() - started < TIMEOUT_S:
            stays.poll(0.005)
        reassigned_ms = (time.monotonic() - started) * 1000
        print(f"reassigned {reassigned_ms:.0f} ms after the clock was advanced")
        # The wall time is the figure the issue asks for; printed, never asserted (a busy
        # machine must not fail the test): the reassignment itself is what is checked.
        assert len(stays.assignment()) == 2
    finally:
        broker.clear_faults()
        stays.close()
        goes.close()


def test_kafkajs_sets_a_rule_over_the_control_endpoint_and_rides_it_out(broker: BrokerThread) -> None:
    if shutil.which("node") is None:  # a failure, not a skip: bash .ci/run installs it
        pytest.fail("node is not on PATH: bash .ci/run installs nodejs and the kafkajs driver")
    topic = new_topic(broker)
    script = COMPAT_DIR / "node" / "control_endpoint.js"
    done = subprocess.run(
        ["node", str(script), broker.bootstrap, broker.server.control_urls[0], topic],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    report = json.loads(done.stdout.splitlines()[-1])
    assert report["fired"] == 2
    assert values(broker, topic) == [str(index).encode() for index in range(10)]


def test_a_transaction_is_aborted_the_moment_the_clock_passes_its_timeout(broker: BrokerThread) -> None:
    topic = new_topic(broker)
    producer = Producer(
        {
            "bootstrap.servers": broker.bootstrap,
            "transactional.id": f"tx-{topic}",
            "transaction.timeout.ms": 60_000,
        }
    )
    producer.init_transactions(TIMEOUT_S)
    producer.begin_transaction()
    producer.produce(topic, b"never seen")
    producer.flush(TIMEOUT_S)
    broker.advance_clock(61)  # past transaction.timeout.ms: the coordinator aborts it now
    with pytest.raises(KafkaException) as refused:
        producer.commit_transaction(TIMEOUT_S)
    assert refused.value.args[0].fatal()  # fenced by the abort's epoch bump, as with Kafka
    log = broker.call(lambda: broker.broker.topics.partition(topic, 0))
    assert log is not None
    aborted = broker.call(lambda: log.aborted_transactions(0, log.last_stable_offset))
    assert [entry.first_offset for entry in aborted] == [0]
