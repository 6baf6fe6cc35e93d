"""`__transaction_state`: append and replay over a TopicStore, in memory and on disk,
and a broker on disk that comes back with its transactions."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from kafka_shim.protocol.record_codec import Record, batch_keyed_records, build_batch
from kafka_shim.protocol.records import iter_headers
from kafka_shim.protocol.transaction_records import (
    TransactionRecord,
    TransactionValue,
    decode_record,
    encode_record,
)
from kafka_shim.shim.broker import Broker
from kafka_shim.shim.config.broker_config import BrokerConfig
from kafka_shim.shim.coordinator.types import TopicPartition
from kafka_shim.shim.transactions.state import TxnState
from kafka_shim.storage.memory import MemoryLog
from kafka_shim.storage.offsets_log import partition_for
from kafka_shim.storage.topics import TopicStore
from kafka_shim.storage.transaction_log import TRANSACTION_TOPIC, TransactionLog

NOW = 1_700_000_000_000


def value(epoch: int, status: TxnState = TxnState.EMPTY) -> TransactionValue:
    return TransactionValue(1000, epoch, 60_000, int(status), (), NOW, -1)


def test_records_land_in_the_partition_kafka_picks_and_replay_keeps_the_latest() -> None:
    topics = TopicStore(lambda topic, partition: MemoryLog())
    log = TransactionLog(topics, 5, transaction_version=2)
    assert log.topic is None  # created by the first record, as Kafka does
    log.append([TransactionRecord("a", value(0)), TransactionRecord("b", value(0))], NOW)
    log.append([TransactionRecord("a", value(1)), TransactionRecord("b", None)], NOW)
    topic = log.topic
    assert topic is not None and len(topic.partitions) == 5
    assert topic.configs["cleanup.policy"] == "compact"
    holder = topic.partitions[partition_for("a", 5)]
    data = holder.read(0, 1 << 20)
    keys = [
        decode_record(k, v).transactional_id
        for h in iter_headers(data)
        for _, k, v in batch_keyed_records(data, h)
    ]
    assert keys.count("a") == 2
    assert sorted(log.replay(), key=lambda r: r.transactional_id) == [
        TransactionRecord("a", value(1)),
        TransactionRecord("b", None),
    ]


def test_a_transition_writes_the_batch_build_batch_made_of_its_records() -> None:
    """TransactionLog builds its batch where the log places it (7671a44: build_keyed_batch and
    append_placed): the bytes that build_batch of the records, each stamped `now_ms` at
    offsets from the log end, made before."""
    topics = TopicStore(lambda topic, partition: MemoryLog())
    log = TransactionLog(topics, 1, transaction_version=2)
    log.append([TransactionRecord("a", value(0))], NOW)  # the next batch starts at offset 1
    records = [
        TransactionRecord("a", value(1)),
        TransactionRecord("b", value(0)),
        TransactionRecord("c", None),
    ]
    log.append(records, NOW + 5)
    partition = log.topic.partitions[0]  # type: ignore[union-attr]
    keys_values = [encode_record(record, 2) for record in records]
    built = build_batch(
        [Record(1 + i, NOW + 5, k, v) for i, (k, v) in enumerate(keys_values)],
        partition_leader_epoch=partition.leader_epoch,
    )
    assert bytes(partition.read(1, 1 << 20)) == built.data


def test_an_existing_topic_keeps_its_partition_count() -> None:
    topics = TopicStore(lambda topic, partition: MemoryLog())
    TransactionLog(topics, 3, 2).append([TransactionRecord("a", value(0))], NOW)
    again = TransactionLog(topics, 7, 2)
    again.append([TransactionRecord("a", value(1))], NOW)
    assert again.topic is not None and len(again.topic.partitions) == 3
    assert list(again.replay()) == [TransactionRecord("a", value(1))]


def test_a_memory_log_compacts_itself() -> None:
    topics = TopicStore(lambda topic, partition: MemoryLog())
    log = TransactionLog(topics, 1, 2)
    for epoch in range(3000):
        log.append([TransactionRecord("a", value(epoch % 100))], NOW)
    partition = log.topic.partitions[0]  # type: ignore[union-attr]
    assert isinstance(partition, MemoryLog) and partition.batch_count < 3000
    assert list(log.replay()) == [TransactionRecord("a", value(2999 % 100))]


def test_a_broker_on_disk_comes_back_with_its_transactions(tmp_path: Path) -> None:
    config = replace(BrokerConfig(), data_dir=tmp_path)
    clock = [NOW]
    broker = Broker(config, clock=lambda: clock[0])
    broker.topics.create("t", 1)
    coordinator = broker.transactions
    empty = coordinator.init_producer_id("idle", 60_000, None, NOW)
    ongoing = coordinator.init_producer_id("open", 60_000, None, NOW)
    coordinator.add_partitions("open", ongoing.producer_id, 0, [TopicPartition("t", 0)], 0, NOW)
    broker.close()

    clock[0] = NOW + 1000
    again = Broker(config, clock=lambda: clock[0])
    assert TRANSACTION_TOPIC in [t.name for t in again.topics]
    idle = again.transactions.describe("idle")
    assert idle is not None and (idle.state, idle.producer_id, idle.producer_epoch) == (
        TxnState.EMPTY,
        empty.producer_id,
        0,
    )
    open_ = again.transactions.describe("open")
    assert open_ is not None and open_.state is TxnState.ONGOING
    assert open_.partitions == {TopicPartition("t", 0)}
    # Its timeout still counts from when it started.
    assert again.timers.watch_deadlines() == NOW + 60_000
    again.close()
