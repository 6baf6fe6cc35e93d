"""Transactions with `--brokers 2 --process-per-broker` and a real client (librdkafka): the
transaction coordinator's process sends the markers of partitions the other process leads to
it (WriteTxnMarkers), and the leaders ask the coordinator's process before a transactional
write (AddPartitionsToTxn verify_only); a read_committed consumer sees exactly what was
committed; consume-transform-produce commits a group coordinated by the other process; a leader
that stops answering holds the transaction in PrepareCommit, never the client's commit."""

from __future__ import annotations

import json
import os
import signal
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from compat.targets import RunningBroker
from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.shim.processes.spec import SPEC_ENV
from kafka_shim.shim.processes.transaction_ends import ANSWER_WITHIN_S
from tests.shim.processes.test_process_per_broker_clients import children, java, processes
from tests.wire import WireClient

pytestmark = pytest.mark.clients

FIND_COORDINATOR, INIT_PRODUCER_ID, DESCRIBE_TRANSACTIONS = 10, 22, 65
PARTITIONS = 4
GROUP_KEY, TRANSACTION_KEY = 0, 1
SLACK_S = 1.0  # a loaded machine's scheduling, beyond the EndTxn's wait for markers

Cluster = tuple[RunningBroker, list[str]]


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    data_dir = tmp_path_factory.mktemp("transactions") / "data"
    with processes(data_dir, "--console", "off") as started:
        yield started


def coordinator(address: str, key: str, key_type: int) -> str:
    with WireClient(address, timeout_s=10) as client:
        found = client.request(FIND_COORDINATOR, 3, {"key": key, "key_type": key_type})
    assert found.error_code == ErrorCode.NONE
    return f"{found.host}:{found.port}"


def create_topic(bootstrap: str, name: str) -> dict[int, int]:
    """The topic made with PARTITIONS partitions; partition -> leader, both brokers leading."""
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(name, PARTITIONS, 2)])[name].result(10)
    deadline = time.monotonic() + 10
    while True:
        found = admin.list_topics(name, timeout=10).topics[name]
        leaders = {p.id: p.leader for p in found.partitions.values()}
        if len(leaders) == PARTITIONS or time.monotonic() > deadline:
            break
    assert sorted(set(leaders.values())) == [0, 1]
    return leaders


def transactional_producer(bootstrap: str, transactional_id: str) -> Any:
    from confluent_kafka import Producer

    producer = Producer({"bootstrap.servers": bootstrap, "transactional.id": transactional_id})
    producer.init_transactions(20)
    return producer


def consume(bootstrap: str, topic: str, isolation: str, expected: int) -> list[bytes]:
    """Every value of `topic` a consumer of `isolation` reads (waiting for `expected` of them)."""
    from confluent_kafka import Consumer, TopicPartition

    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": f"reader-{uuid.uuid4().hex[:8]}",
            "isolation.level": isolation,
            "enable.auto.commit": False,
            "enable.partition.eof": True,
        }
    )
    consumer.assign([TopicPartition(topic, p, 0) for p in range(PARTITIONS)])
    values: list[bytes] = []
    at_end: set[int] = set()
    deadline = time.monotonic() + 20
    try:
        while time.monotonic() < deadline and (len(values) < expected or len(at_end) < PARTITIONS):
            message = consumer.poll(0.2)
            if message is None:
                continue
            error, value, partition = message.error(), message.value(), message.partition()
            assert partition is not None
            if error is None and value is not None:
                values.append(value)
                at_end.discard(partition)
            elif error is not None and error.code() == -191:  # _PARTITION_EOF
                at_end.add(partition)
    finally:
        consumer.close()
    return values


def test_commits_and_aborts_across_both_processes(cluster: Cluster) -> None:
    _, addresses = cluster
    bootstrap, topic = ",".join(addresses), f"tx-{uuid.uuid4().hex[:8]}"
    create_topic(bootstrap, topic)
    producer = transactional_producer(bootstrap, f"txn-{uuid.uuid4().hex[:8]}")
    committed: list[bytes] = []
    for round_, commit in enumerate((True, False, True)):
        producer.begin_transaction()
        values = [b"r%d-%d" % (round_, i) for i in range(2 * PARTITIONS)]
        for i, value in enumerate(values):
            producer.produce(topic, value=value, partition=i % PARTITIONS)
        assert producer.flush(15) == 0  # in every partition's log before the end
        if commit:
            producer.commit_transaction(20)
            committed += values
        else:
            producer.abort_transaction(20)
    assert sorted(consume(bootstrap, topic, "read_committed", len(committed))) == sorted(committed)
    # The aborted records were written, in both processes' partitions: only the markers hide them.
    assert len(consume(bootstrap, topic, "read_uncommitted", 3 * 2 * PARTITIONS)) == 3 * 2 * PARTITIONS


def test_consume_transform_produce_commits_a_group_of_the_other_process(cluster: Cluster) -> None:
    from confluent_kafka import Consumer, TopicPartition

    _, addresses = cluster
    bootstrap = ",".join(addresses)
    source, sink = f"in-{uuid.uuid4().hex[:8]}", f"out-{uuid.uuid4().hex[:8]}"
    create_topic(bootstrap, source)
    create_topic(bootstrap, sink)
    transactional_id = f"ctp-{uuid.uuid4().hex[:8]}"
    txn_coordinator = coordinator(addresses[0], transactional_id, TRANSACTION_KEY)
    group = next(
        g
        for g in (f"ctp-group-{n}" for n in range(64))
        if coordinator(addresses[0], g, GROUP_KEY) != txn_coordinator
    )
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": group, "enable.auto.commit": False})
    producer = transactional_producer(bootstrap, transactional_id)
    try:

        def transaction(offset: int, commit: bool) -> None:
            producer.begin_transaction()
            for p in range(PARTITIONS):
                producer.produce(sink, value=b"from %d" % offset, partition=p)
            offsets = [TopicPartition(source, p, offset) for p in range(PARTITIONS)]
            producer.send_offsets_to_transaction(offsets, consumer.consumer_group_metadata(), 20)
            assert producer.flush(15) == 0
            if commit:
                producer.commit_transaction(20)
            else:
                producer.abort_transaction(20)

        def committed() -> list[int]:
            found = consumer.committed([TopicPartition(source, p) for p in range(PARTITIONS)], timeout=10)
            return [tp.offset for tp in found]

        transaction(5, commit=True)
        assert committed() == [5] * PARTITIONS
        transaction(9, commit=False)
        assert committed() == [5] * PARTITIONS  # the aborted offsets never became the group's
        transaction(12, commit=True)
        assert committed() == [12] * PARTITIONS
    finally:
        consumer.close()
    assert sorted(consume(bootstrap, sink, "read_committed", 2 * PARTITIONS)) == sorted(
        [b"from 5"] * PARTITIONS + [b"from 12"] * PARTITIONS
    )


def test_commit_is_answered_once_the_other_leader_wrote_its_markers(cluster: Cluster) -> None:
    """EndTxn waits (briefly) for the WriteTxnMarkers of the other process: right after each
    commit the transaction is CompleteCommit, and the next transaction's AddPartitionsToTxn is
    not refused CONCURRENT_TRANSACTIONS (librdkafka would retry it 20 ms later)."""
    _, addresses = cluster
    bootstrap, topic = ",".join(addresses), f"quick-{uuid.uuid4().hex[:8]}"
    leaders = create_topic(bootstrap, topic)
    transactional_id = f"quick-{uuid.uuid4().hex[:8]}"
    txn_coordinator = coordinator(addresses[0], transactional_id, TRANSACTION_KEY)
    elsewhere = [p for p, leader in leaders.items() if addresses[leader] != txn_coordinator]
    assert elsewhere  # some markers cross to the other process
    producer = transactional_producer(bootstrap, transactional_id)
    for round_ in range(5):
        producer.begin_transaction()
        for p in range(PARTITIONS):
            producer.produce(topic, value=b"quick %d" % round_, partition=p)
        producer.commit_transaction(20)
        assert describe(txn_coordinator, transactional_id).transaction_state == "CompleteCommit"
    values = consume(bootstrap, topic, "read_committed", 5 * PARTITIONS)
    assert len(values) == 5 * PARTITIONS


def node_pids(broker: RunningBroker) -> dict[int, int]:
    """Broker id -> the pid of its process."""
    assert broker.process is not None
    pids = {}
    for pid in children(broker.process.pid):
        environ = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
        spec = next(e for e in environ if e.startswith(SPEC_ENV.encode() + b"="))
        pids[json.loads(spec.split(b"=", 1)[1])["node_id"]] = pid
    return pids


def describe(address: str, transactional_id: str) -> Any:
    with WireClient(address, timeout_s=10) as client:
        answer = client.request(DESCRIBE_TRANSACTIONS, 0, {"transactional_ids": [transactional_id]})
    return answer.transaction_states[0]


def test_a_leader_that_stops_answering_holds_the_transaction_not_the_client(cluster: Cluster) -> None:
    """As in Kafka: EndTxn is answered once PrepareCommit is written; the markers wait for the
    stopped leader (retried), the producer's next InitProducerId is CONCURRENT_TRANSACTIONS
    meanwhile, and the transaction completes once the leader answers again."""
    broker, addresses = cluster
    bootstrap, topic = ",".join(addresses), f"stall-{uuid.uuid4().hex[:8]}"
    leaders = create_topic(bootstrap, topic)
    transactional_id = f"stall-{uuid.uuid4().hex[:8]}"
    txn_coordinator = coordinator(addresses[0], transactional_id, TRANSACTION_KEY)
    txn_node = addresses.index(txn_coordinator)
    other = 1 - txn_node
    producer = transactional_producer(bootstrap, transactional_id)
    producer.begin_transaction()
    for p in range(PARTITIONS):
        producer.produce(topic, value=b"held %d" % p, partition=p)
    assert producer.flush(15) == 0
    pid = node_pids(broker)[other]
    os.kill(pid, signal.SIGSTOP)
    try:
        started = time.monotonic()
        producer.commit_transaction(20)
        # Answered once PrepareCommit is written and the wait for the markers is over.
        assert time.monotonic() - started < ANSWER_WITHIN_S + SLACK_S
        state = describe(txn_coordinator, transactional_id)
        assert state.transaction_state == "PrepareCommit"
        assert {t.topic for t in state.topics} == {topic}
        assert sorted(p for t in state.topics for p in t.partitions) == sorted(
            p for p, leader in leaders.items() if leader == other
        )
        with WireClient(txn_coordinator, timeout_s=10) as client:
            body = {"transactional_id": transactional_id, "transaction_timeout_ms": 60_000}
            again = client.request(INIT_PRODUCER_ID, 4, body | {"producer_id": -1, "producer_epoch": -1})
        assert again.error_code == ErrorCode.CONCURRENT_TRANSACTIONS
    finally:
        os.kill(pid, signal.SIGCONT)
    deadline = time.monotonic() + 20
    while describe(txn_coordinator, transactional_id).transaction_state != "CompleteCommit":
        assert time.monotonic() < deadline, "the markers were not sent again once the leader answered"
        time.sleep(0.05)
    values = consume(bootstrap, topic, "read_committed", PARTITIONS)
    assert sorted(values) == sorted(b"held %d" % p for p in range(PARTITIONS))
    producer.begin_transaction()  # the producer goes on
    producer.produce(topic, value=b"after", partition=0)
    producer.commit_transaction(20)


def test_the_java_client_transacts_under_transaction_version_2(cluster: Cluster) -> None:
    """kafka-clients 4.x speaks transaction version 2: its Produce (v12) and TxnOffsetCommit
    (v5) add their partitions to the transaction, which the leader and the group coordinator
    ask of the coordinator's process (AddPartitionsToTxn v5) when it is the other one."""
    from confluent_kafka import Producer

    from compat.schema import Command

    _, addresses = cluster
    count, name = 60, uuid.uuid4().hex[:8]
    transactional_id = f"java-{name}"
    txn_coordinator = coordinator(addresses[0], transactional_id, TRANSACTION_KEY)
    group = next(
        g
        for g in (f"java-group-{name}-{n}" for n in range(64))
        if coordinator(addresses[0], g, GROUP_KEY) != txn_coordinator
    )
    bootstrap, source, sink = ",".join(addresses), f"java-in-{name}", f"java-out-{name}"
    create_topic(bootstrap, source)
    create_topic(bootstrap, sink)
    producer = Producer({"bootstrap.servers": bootstrap})
    for i in range(count):
        producer.produce(source, key=b"key-%d" % (i % 7), value=b"%d" % i)
    assert producer.flush(15) == 0
    common = {"bootstrap": bootstrap, "partitions": PARTITIONS}
    transact = Command(
        op="transact",
        topic=source,
        output=sink,
        group=group,
        transactional_id=transactional_id,
        count=count,
        timeout_s=60,
        **common,  # type: ignore[arg-type]
    )
    events = java(transact)
    done = next(e for e in events if e["event"] == "transacted")
    assert done["committed"] == count and done["aborted"] > 0
    values = sorted(int(v) for v in consume(bootstrap, sink, "read_committed", count))
    assert values == list(range(count))


def test_transactions_are_coordinated_by_both_processes(cluster: Cluster) -> None:
    """`__transaction_state` has a partition per broker, as `__consumer_offsets` does, so the
    transactional ids spread over the processes (one partition put them all on one)."""
    _, addresses = cluster
    found = {coordinator(addresses[0], f"spread-{n}", TRANSACTION_KEY) for n in range(16)}
    assert found == set(addresses)
    for key in (f"spread-{n}" for n in range(4)):  # each process names the same coordinator
        named = {coordinator(address, key, TRANSACTION_KEY) for address in addresses}
        assert len(named) == 1
