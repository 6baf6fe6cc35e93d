"""Transactions: committed transactions/s from one confluent-kafka producer (10
records per transaction, one commit each), kafka-shim beside Tansu in the same run;
the transaction coordinator's own calls in process (CPU µs per call); and the recovery time
of `__transaction_state` after many transactions.

    python -m bench.transactions [--seconds 3] [--rounds 3] [--transactions 100000]
        [--skip rate calls recovery] [--before-tree DIR]

The rate comes with the broker process's CPU per transaction (what the machine's other work
disturbs least), and the requests the producer sent per transaction, by kind (librdkafka's own
statistics: the same for every broker, unless one makes the client retry or ask again).
With `--before-tree DIR`, kafka-shim from another checkout runs in the same rounds, as "before".

The calls are timed on the pure coordinator (no log, no sockets), each kind over many
transactional ids in turn (process CPU time, so other work on the machine counts little):
InitProducerId, AddPartitionsToTxn starting a transaction, AddPartitionsToTxn adding to it
(AddOffsetsToTxn is the same call for the group's `__consumer_offsets` partition), EndTxn
commit, and the markers written, which complete it.

Recovery is timed in-process on a Broker on disk (the constructor the CLI runs): the
transactions go through the coordinator and the marker writer as EndTxn drives them
(one transactional id per 100 transactions, 2 partitions each), the broker is closed,
and a new Broker opens the data dir and replays `__transaction_state`: once as written,
once after a cleaner pass (the replay alone is timed apart from the whole restart).
"""

from __future__ import annotations

import argparse
import itertools
import json
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from statistics import median
from typing import NamedTuple

from confluent_kafka import Producer

from bench.commits import create_topic
from bench.common import BROKERS, measure_interleaved, print_row, process_cpu_ns, start_shim_from
from bench.request_cpu import renamed
from compat.targets import Broker as Target
from compat.targets import RunningBroker
from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.shim.broker import Broker
from kafka_shim.shim.config.broker_config import BrokerConfig
from kafka_shim.shim.coordinator.outcome import TransactionMarkers
from kafka_shim.shim.coordinator.types import TopicPartition
from kafka_shim.shim.transactions.coordinator import TransactionConfig, TransactionCoordinator
from kafka_shim.shim.transactions.kept import transaction_config
from kafka_shim.storage import cleaner
from kafka_shim.storage.disk_log import DiskLog
from kafka_shim.storage.transaction_log import TRANSACTION_TOPIC

RECORDS_PER_TRANSACTION = 10
TRANSACTIONS_PER_ID = 100
NOW = 1_700_000_000_000


# How often librdkafka reports its statistics (its requests sent, by kind, to each broker).
STATS_INTERVAL_MS = 100


class Sample(NamedTuple):
    rate: float  # committed transactions/s
    cpu_us: float  # the broker process's CPU µs per transaction
    requests: dict[str, float]  # requests the producer sent per transaction, by kind


def transactions_per_second(target: Target, seconds: float) -> Sample:
    topic = f"bench-txn-{uuid.uuid4().hex[:8]}"
    create_topic(target.bootstrap, topic, 1)
    stats: list[str] = []
    producer = Producer(
        {
            "bootstrap.servers": target.bootstrap,
            "transactional.id": f"bench-{topic}",
            "linger.ms": 0,
            "statistics.interval.ms": STATS_INTERVAL_MS,
            "stats_cb": stats.append,
        }
    )
    assert isinstance(target, RunningBroker) and target.process is not None
    pid = target.process.pid
    try:
        producer.init_transactions(30)
        sent_before = requests_sent(producer, stats)
        count = 0
        cpu_before, started = process_cpu_ns(pid), time.perf_counter()
        while time.perf_counter() - started < seconds:
            producer.begin_transaction()
            for i in range(RECORDS_PER_TRANSACTION):
                producer.produce(topic, value=b"x" * 100, key=str(i).encode())
            producer.commit_transaction(30)
            count += 1
        elapsed, cpu_ns = time.perf_counter() - started, process_cpu_ns(pid) - cpu_before
        sent = requests_sent(producer, stats)
        requests = {kind: (n - sent_before.get(kind, 0)) / count for kind, n in sent.items()}
        return Sample(count / elapsed, cpu_ns / count / 1e3, requests)
    finally:
        producer.flush(10)


def requests_sent(producer: Producer, stats: list[str]) -> dict[str, int]:
    """Requests the producer has sent so far, by kind, to all brokers: from librdkafka's next
    statistics (each broker's `req` counters), emitted after this call began (those queued
    before it are served and dropped first)."""
    while producer.poll(0):
        pass
    stats.clear()
    while not stats:
        producer.poll(STATS_INTERVAL_MS / 1000)
    sent: dict[str, int] = {}
    for broker in json.loads(stats[-1])["brokers"].values():
        for kind, n in broker.get("req", {}).items():
            sent[kind] = sent.get(kind, 0) + n
    return sent


def write_transactions(broker: Broker, transactions: int) -> float:
    """Committed transactions through the coordinator and the markers; transactions/s."""
    coordinator = broker.transactions
    partitions = [TopicPartition("t", 0), TopicPartition("t", 1)]
    started = time.perf_counter()
    for i in range(transactions):
        now = NOW + i
        txn = f"txn-{i // TRANSACTIONS_PER_ID}"
        if i % TRANSACTIONS_PER_ID == 0:
            init = coordinator.init_producer_id(txn, 60_000, None, now)
            producer_id, epoch = init.producer_id, init.producer_epoch
        coordinator.add_partitions(txn, producer_id, epoch, partitions, 0, now)
        coordinator.end_transaction(txn, producer_id, epoch, True, 0, now)
    return transactions / (time.perf_counter() - started)


CALL_IDS = 2_000
CALL_KINDS = (
    "InitProducerId",
    "AddPartitionsToTxn (start)",
    "AddOffsetsToTxn (add)",
    "EndTxn commit",
    "markers written",
)


def coordinator_calls(rounds: int) -> None:
    """CPU µs per coordinator call, the median of `rounds` rounds of CALL_IDS ids each."""
    samples: dict[str, list[float]] = {}
    for _ in range(rounds):
        spent = calls_round()
        for kind, us in spent.items():
            samples.setdefault(kind, []).append(us)
        samples.setdefault("transaction", []).append(sum(spent.values()))
    for kind, values in samples.items():
        print_row(f"  {kind}", {"shim": median(values)}, "µs CPU", False)


def calls_round() -> dict[str, float]:
    """One round: each kind of call over CALL_IDS ids in turn, CPU µs per call."""
    ids = itertools.count()
    coordinator = TransactionCoordinator(TransactionConfig(max_ids=10 * CALL_IDS), lambda: next(ids))
    txns = [f"txn-{i}" for i in range(CALL_IDS)]
    producers: dict[str, tuple[int, int]] = {}
    ended: list[TransactionMarkers] = []
    partitions = [TopicPartition("t", 0), TopicPartition("t", 1)]
    offsets = [TopicPartition("__consumer_offsets", 7)]

    def call(kind: str, txn: str) -> None:
        if kind == "InitProducerId":
            answer = coordinator.init_producer_id(txn, 60_000, None, NOW).response
            producers[txn] = (answer.producer_id, answer.producer_epoch)
        elif kind == "AddPartitionsToTxn (start)":
            coordinator.add_partitions(txn, *producers[txn], partitions, 0, NOW)
        elif kind == "AddOffsetsToTxn (add)":
            coordinator.add_partitions(txn, *producers[txn], offsets, 0, NOW)
        elif kind == "EndTxn commit":
            ended.extend(coordinator.end_transaction(txn, *producers[txn], True, 0, NOW).markers)
        else:
            markers = ended[int(txn.removeprefix("txn-"))]
            coordinator.markers_written(markers, dict.fromkeys(markers.partitions, ErrorCode.NONE), NOW)

    spent: dict[str, float] = {}
    for kind in CALL_KINDS:
        started = time.process_time()
        for txn in txns:
            call(kind, txn)
        spent[kind] = (time.process_time() - started) / CALL_IDS * 1e6
    return spent


def restart(config: BrokerConfig, transactions: int, label: str) -> Broker:
    """A new Broker on the data dir, timed; then, apart, the replay of __transaction_state."""
    started = time.perf_counter()
    again = Broker(config, clock=lambda: NOW)
    ms = (time.perf_counter() - started) * 1000
    last = again.transactions.describe(f"txn-{(transactions - 1) // TRANSACTIONS_PER_ID}")
    assert last is not None and last.state.kafka_name == "CompleteCommit", last
    coordinator = TransactionCoordinator(transaction_config(config), again.producer_ids.allocate)
    started = time.perf_counter()
    coordinator.load(again.transaction_log.replay(), NOW)
    replay_ms = (time.perf_counter() - started) * 1000
    print_row(f"restart, {label}", {"shim": ms}, "ms", False)
    print_row("  of which __transaction_state replay", {"shim": replay_ms}, "ms", False)
    return again


def recovery(transactions: int) -> None:
    with tempfile.TemporaryDirectory() as directory:
        config = BrokerConfig(port=0, data_dir=Path(directory))
        broker = Broker(config, clock=lambda: NOW)
        broker.topics.create("t", 2)
        rate = write_transactions(broker, transactions)
        topic = broker.topics.get(TRANSACTION_TOPIC)
        assert topic is not None
        size = sum(p.log_end_offset for p in topic.partitions)
        print(
            f"{transactions:,} transactions written at {rate:,.0f}/s in process; {size:,} log records",
            flush=True,
        )
        broker.close()
        again = restart(config, transactions, "log not compacted yet")
        # What the disk cleaner leaves (it runs every log.retention.check.interval.ms).
        for log in again.topics.get(TRANSACTION_TOPIC).partitions:  # type: ignore[union-attr]
            assert isinstance(log, DiskLog)
            cleaner.clean(log, NOW)
        again.close()
        restart(config, transactions, "after one cleaner pass").close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=3.0, help="length of one round")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--transactions", type=int, default=100_000)
    parser.add_argument(
        "--before-tree", metavar="DIR", help="also measure kafka-shim from this checkout, as 'before'"
    )
    parser.add_argument("--skip", nargs="*", default=[], choices=["rate", "calls", "recovery"])
    args = parser.parse_args()
    if "rate" not in args.skip:
        brokers: tuple[str, ...] = BROKERS
        starters: dict[str, Callable[[], Target]] = {}
        if args.before_tree is not None:
            brokers = ("before", *brokers)
            starters["before"] = lambda: renamed(start_shim_from(args.before_tree), "before")
        samples = measure_interleaved(
            lambda b: transactions_per_second(b, args.seconds), args.rounds, brokers, starters
        )
        label = f"transactions/s ({RECORDS_PER_TRANSACTION} records, commit each)"
        print_row(label, {k: median(s.rate for s in v) for k, v in samples.items()}, "txn/s", True)
        label = "  broker CPU per transaction"
        print_row(label, {k: median(s.cpu_us for s in v) for k, v in samples.items()}, "µs", False)
        kinds = sorted({kind for v in samples.values() for s in v for kind in s.requests})
        for kind in kinds:
            per_100 = {k: median(100 * s.requests.get(kind, 0.0) for s in v) for k, v in samples.items()}
            if max(per_100.values()) >= 1:  # not the odd Metadata refresh
                print_row(f"  {kind} per 100 txns", per_100, "requests", False)
    if "calls" not in args.skip:
        print("coordinator calls in process, per call:", flush=True)
        coordinator_calls(args.rounds)
    if "recovery" not in args.skip:
        recovery(args.transactions)


if __name__ == "__main__":
    main()
