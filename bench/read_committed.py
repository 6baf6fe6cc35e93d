"""read_committed vs read_uncommitted consume rate on the same transactional data
(confluent-kafka consumers, client defaults), kafka-shim beside Tansu in the same run.

    python -m bench.read_committed [--transactions 10000] [--rounds 3]

The data: `--transactions` transactions of 10 100-byte records in one partition, one in
three aborted. kafka-shim's partition is written through its storage layer (a
transactional batch and a COMMIT/ABORT marker per transaction, as a transactional
producer leaves them) into a data directory the broker is then started on. Tansu's is
written by a confluent-kafka transactional producer with the same shape. Tansu does not
keep aborted records (its read_uncommitted consumer does not see them either), so its
two rates are over the committed records only; kafka-shim's read_uncommitted rate is
over every record, its read_committed rate over the committed ones (the consumer
drops the aborted ones using the aborted-transactions list).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
import uuid
from pathlib import Path
from statistics import median

from confluent_kafka import Consumer, Producer, TopicPartition

from bench.commits import create_topic
from bench.common import print_row
from compat.targets import RunningBroker, TargetUnavailable, launch, start_tansu
from kafka_shim.protocol.record_codec import Record, build_batch
from kafka_shim.protocol.records import TRANSACTIONAL_FLAG
from kafka_shim.shim.broker import Broker
from kafka_shim.shim.config.broker_config import BrokerConfig

TOPIC = "bench-read-committed"
RECORDS_PER_TRANSACTION = 10
PAYLOAD = b"x" * 100
PRODUCER_ID = 1000
NOW = 1_700_000_000_000
DEADLINE_S = 300


def aborted(transaction: int) -> bool:
    return transaction % 3 == 2


def fill_shim(data_dir: Path, transactions: int) -> None:
    broker = Broker(BrokerConfig(port=0, data_dir=data_dir))
    try:
        log = broker.topics.create(TOPIC, 1).partition(0)
        assert log is not None
        for transaction in range(transactions):
            base = log.log_end_offset
            records = [Record(base + i, NOW, None, PAYLOAD) for i in range(RECORDS_PER_TRANSACTION)]
            log.append(
                build_batch(
                    records,
                    attributes=TRANSACTIONAL_FLAG,
                    producer_id=PRODUCER_ID,
                    producer_epoch=0,
                    base_sequence=transaction * RECORDS_PER_TRANSACTION,
                )
            )
            log.write_txn_marker(PRODUCER_ID, 0, not aborted(transaction), 0, NOW)
    finally:
        broker.close()


def start_shim(data_dir: Path) -> RunningBroker:
    argv = [sys.executable, "-m", "kafka_shim", "--port", "0", "--host", "127.0.0.1"]
    return launch("shim", [*argv, "--data-dir", str(data_dir)])


def fill_tansu(bootstrap: str, transactions: int) -> None:
    create_topic(bootstrap, TOPIC, 1)
    producer = Producer({"bootstrap.servers": bootstrap, "transactional.id": f"bench-{uuid.uuid4().hex[:8]}"})
    producer.init_transactions(30)
    for transaction in range(transactions):
        producer.begin_transaction()
        for _ in range(RECORDS_PER_TRANSACTION):
            producer.produce(TOPIC, PAYLOAD)
        if aborted(transaction):
            producer.abort_transaction(30)
        else:
            producer.commit_transaction(30)


def consume_rate(broker: RunningBroker, isolation: str, expected: int) -> float:
    """Records/s until `expected` records arrived; a broker that delivers more (Tansu
    has delivered one more than committed under read_committed) is reported."""
    consumer = Consumer(
        {
            "bootstrap.servers": broker.bootstrap,
            "group.id": f"bench-{uuid.uuid4().hex[:8]}",
            "isolation.level": isolation,
            "enable.auto.commit": False,
        }
    )
    try:
        consumer.assign([TopicPartition(TOPIC, 0, 0)])
        received = 0
        started = time.perf_counter()
        deadline = started + DEADLINE_S
        while received < expected and time.perf_counter() < deadline:
            # A short timeout: consume() waits it out whenever fewer than num_messages are
            # left, which would add up to a second to the last call.
            for message in consumer.consume(num_messages=10_000, timeout=0.05):
                if message.error() is None:
                    received += 1
        elapsed = time.perf_counter() - started
    finally:
        consumer.close()
    if received < expected:
        raise RuntimeError(f"{broker.name} {isolation}: consumed {received} of {expected} records")
    if received > expected:
        print(f"  {broker.name} {isolation}: delivered {received} records, {expected} expected")
    return received / elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--transactions", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    total = args.transactions * RECORDS_PER_TRANSACTION
    committed = sum(not aborted(t) for t in range(args.transactions)) * RECORDS_PER_TRANSACTION
    # Records each consumer must receive, per broker and isolation level.
    expected = {
        "shim": {"read_committed": committed, "read_uncommitted": total},
        "tansu": {"read_committed": committed, "read_uncommitted": committed},
    }
    brokers: list[RunningBroker] = []
    with tempfile.TemporaryDirectory(prefix="bench-read-committed-") as data_dir:
        try:
            fill_shim(Path(data_dir), args.transactions)
            brokers.append(start_shim(Path(data_dir)))
            try:
                tansu = start_tansu()
                brokers.append(tansu)
                fill_tansu(tansu.bootstrap, args.transactions)
            except TargetUnavailable as exc:
                print(f"  tansu: unavailable ({str(exc).splitlines()[0]})")
            samples: dict[str, dict[str, list[float]]] = {}
            for _ in range(args.rounds):
                for broker in brokers:
                    for isolation, count in expected[broker.name].items():
                        rate = consume_rate(broker, isolation, count)
                        samples.setdefault(isolation, {}).setdefault(broker.name, []).append(rate)
        finally:
            for broker in brokers:
                broker.stop()
    print(f"{args.transactions} transactions x {RECORDS_PER_TRANSACTION} records, one in three aborted")
    for isolation, by_broker in samples.items():
        print_row(
            f"consume {isolation} (median)",
            {name: median(rates) for name, rates in by_broker.items()},
            "records/s",
            True,
        )


if __name__ == "__main__":
    main()
