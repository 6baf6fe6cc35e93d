"""The transaction APIs through the wire schemas (Harness): InitProducerId with a
transactional id, AddPartitionsToTxn, AddOffsetsToTxn, EndTxn errors, Produce's
transaction check, ListTransactions, DescribeTransactions, ApiVersions features."""

from __future__ import annotations

from typing import Any

import pytest
from kafka.record.default_records import DefaultRecordBatchBuilder

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.shim.handlers import (
    add_offsets_to_txn,
    add_partitions_to_txn,
    api_versions,
    describe_transactions,
    end_txn,
    find_coordinator,
    init_producer_id,
    list_transactions,
    offset_fetch,
    produce,
    txn_offset_commit,
)
from kafka_shim.storage.offsets_log import OFFSETS_TOPIC, partition_for
from tests.helpers import Harness

TXN = "txn-a"
E = ErrorCode


def transactional_batch(producer_id: int, epoch: int, sequence: int = 0) -> bytes:
    builder = DefaultRecordBatchBuilder(
        magic=2,
        compression_type=0,
        is_transactional=True,
        producer_id=producer_id,
        producer_epoch=epoch,
        base_sequence=sequence,
        batch_size=1 << 20,
    )
    builder.append(0, timestamp=1_000, key=None, value=b"v", headers=[])
    return bytes(builder.build())


class Producer:
    """One transactional producer's requests, at chosen versions."""

    def __init__(self, h: Harness, txn: str = TXN) -> None:
        self.h = h
        self.txn = txn
        self.pid = -1
        self.epoch = -1

    def init(self, version: int = 4, timeout_ms: int = 60_000) -> Any:
        response = self.h.call(
            init_producer_id, version, {"transactional_id": self.txn, "transaction_timeout_ms": timeout_ms}
        )
        if response.error_code == E.NONE:
            self.pid, self.epoch = response.producer_id, response.producer_epoch
        return response

    def add(self, topic: str, *partitions: int, version: int = 3, epoch: int | None = None) -> dict[int, int]:
        response = self.h.call(
            add_partitions_to_txn,
            version,
            {
                "v3_and_below_transactional_id": self.txn,
                "v3_and_below_producer_id": self.pid,
                "v3_and_below_producer_epoch": self.epoch if epoch is None else epoch,
                "v3_and_below_topics": [{"name": topic, "partitions": list(partitions)}],
            },
        )
        (result,) = response.results_by_topic_v3_and_below
        return {r.partition_index: r.partition_error_code for r in result.results_by_partition}

    def end(self, commit: bool, version: int = 3, epoch: int | None = None) -> Any:
        request = {
            "transactional_id": self.txn,
            "producer_id": self.pid,
            "producer_epoch": self.epoch if epoch is None else epoch,
            "committed": commit,
        }
        return self.h.call(end_txn, version, request)

    def produce(self, topic: str, partition: int, version: int = 9, epoch: int | None = None) -> int:
        records = transactional_batch(self.pid, self.epoch if epoch is None else epoch)
        response = self.h.call(
            produce,
            version,
            {
                "transactional_id": self.txn,
                "acks": -1,
                "timeout_ms": 1000,
                "topic_data": [{"name": topic, "partition_data": [{"index": partition, "records": records}]}],
            },
        )
        return int(response.responses[0].partition_responses[0].error_code)


@pytest.fixture
def h() -> Harness:
    harness = Harness()
    harness.broker.topics.create("t", 2)
    return harness


def test_find_coordinator_names_this_broker_for_a_transactional_id(h: Harness) -> None:
    response = h.call(find_coordinator, 4, {"key_type": 1, "coordinator_keys": [TXN]})
    (coordinator,) = response.coordinators
    assert (coordinator.error_code, coordinator.node_id, coordinator.port) == (E.NONE, 0, 19092)


def test_init_producer_id_bumps_the_epoch_on_every_init(h: Harness) -> None:
    p = Producer(h)
    first = p.init()
    second = p.init()
    assert first.error_code == second.error_code == E.NONE
    assert second.producer_id == first.producer_id
    assert (first.producer_epoch, second.producer_epoch) == (0, 1)
    # A transactional id is not an idempotent producer: another id, another producer id.
    other = Producer(h, "txn-b").init()
    assert other.producer_id != first.producer_id


@pytest.mark.parametrize(("version", "code"), [(3, E.INVALID_PRODUCER_EPOCH), (4, E.PRODUCER_FENCED)])
def test_kip_360_recovery_and_fencing_by_version(h: Harness, version: int, code: ErrorCode) -> None:
    p = Producer(h)
    p.init()
    request = {
        "transactional_id": TXN,
        "transaction_timeout_ms": 60_000,
        "producer_id": p.pid,
        "producer_epoch": 0,
    }
    resumed = h.call(init_producer_id, version, request)
    assert (resumed.error_code, resumed.producer_epoch) == (E.NONE, 1)
    stale = h.call(init_producer_id, version, {**request, "producer_epoch": 7})
    assert stale.error_code == code


@pytest.mark.parametrize(("pid", "epoch"), [(-1, 0), (5, -1)])
def test_init_with_half_a_producer_id_and_epoch_is_invalid(h: Harness, pid: int, epoch: int) -> None:
    request = {
        "transactional_id": TXN,
        "transaction_timeout_ms": 60_000,
        "producer_id": pid,
        "producer_epoch": epoch,
    }
    assert h.call(init_producer_id, 4, request).error_code == E.INVALID_REQUEST


def test_transaction_timeout_above_the_maximum_is_refused() -> None:
    h = Harness(transaction_max_timeout_ms=10_000)
    assert Producer(h).init(timeout_ms=10_001).error_code == E.INVALID_TRANSACTION_TIMEOUT
    assert Producer(h).init(timeout_ms=10_000).error_code == E.NONE


def test_add_partitions_then_produce_inside_the_transaction(h: Harness) -> None:
    p = Producer(h)
    p.init()
    assert p.add("t", 0, 1) == {0: E.NONE, 1: E.NONE}
    assert p.produce("t", 0) == E.NONE
    described = h.call(describe_transactions, 0, {"transactional_ids": [TXN]})
    (state,) = described.transaction_states
    assert (state.error_code, state.transaction_state, state.producer_id) == (E.NONE, "Ongoing", p.pid)
    assert [(t.topic, t.partitions) for t in state.topics] == [("t", [0, 1])]
    assert state.transaction_start_time_ms == h.clock.now


def test_add_partitions_of_an_unknown_topic(h: Harness) -> None:
    p = Producer(h)
    p.init()
    response = h.call(
        add_partitions_to_txn,
        3,
        {
            "v3_and_below_transactional_id": TXN,
            "v3_and_below_producer_id": p.pid,
            "v3_and_below_producer_epoch": p.epoch,
            "v3_and_below_topics": [{"name": "t", "partitions": [0]}, {"name": "nope", "partitions": [0]}],
        },
    )
    codes = {
        (t.name, r.partition_index): r.partition_error_code
        for t in response.results_by_topic_v3_and_below
        for r in t.results_by_partition
    }
    assert codes == {("t", 0): E.OPERATION_NOT_ATTEMPTED, ("nope", 0): E.UNKNOWN_TOPIC_OR_PARTITION}
    assert h.call(describe_transactions, 0, {"transactional_ids": [TXN]}).transaction_states[
        0
    ].transaction_state == ("Empty")


@pytest.mark.parametrize(("version", "code"), [(1, E.INVALID_PRODUCER_EPOCH), (2, E.PRODUCER_FENCED)])
def test_a_fenced_producer_is_told_by_version(h: Harness, version: int, code: ErrorCode) -> None:
    zombie = Producer(h)
    zombie.init()
    Producer(h).init()
    assert zombie.add("t", 0, version=version) == {0: code}
    assert zombie.end(True, version=version).error_code == code
    offsets = h.call(
        add_offsets_to_txn,
        version,
        {"transactional_id": TXN, "producer_id": zombie.pid, "producer_epoch": zombie.epoch, "group_id": "g"},
    )
    assert offsets.error_code == code


@pytest.mark.parametrize(
    ("version", "code"),
    [(3, E.INVALID_TXN_STATE), (10, E.INVALID_TXN_STATE), (11, E.TRANSACTION_ABORTABLE)],
)
def test_produce_to_a_partition_outside_the_transaction(h: Harness, version: int, code: ErrorCode) -> None:
    p = Producer(h)
    p.init()
    p.add("t", 0)
    assert p.produce("t", 1, version=version) == code
    log = h.broker.topics.partition("t", 1)
    assert log is not None and log.log_end_offset == 0


def test_produce_from_a_fenced_producer(h: Harness) -> None:
    zombie = Producer(h)
    zombie.init()
    zombie.add("t", 0)
    h.call(init_producer_id, 4, {"transactional_id": TXN, "transaction_timeout_ms": 60_000})
    assert zombie.produce("t", 0) == E.INVALID_PRODUCER_EPOCH


def test_produce_of_transactional_records_needs_the_transactional_id(h: Harness) -> None:
    p = Producer(h)
    p.init()
    p.add("t", 0)
    records = transactional_batch(p.pid, p.epoch)
    request = {
        "transactional_id": None,
        "acks": -1,
        "timeout_ms": 1000,
        "topic_data": [{"name": "t", "partition_data": [{"index": 0, "records": records}]}],
    }
    code = h.call(produce, 9, request).responses[0].partition_responses[0].error_code
    assert code == E.TRANSACTIONAL_ID_AUTHORIZATION_FAILED


def test_produce_v12_adds_the_partition_to_the_transaction(h: Harness) -> None:
    p = Producer(h)
    p.init()
    assert p.produce("t", 1, version=12) == E.NONE
    (state,) = h.call(describe_transactions, 0, {"transactional_ids": [TXN]}).transaction_states
    assert state.transaction_state == "Ongoing"
    assert [(t.topic, t.partitions) for t in state.topics] == [("t", [1])]


def test_add_offsets_adds_the_groups_offsets_partition(h: Harness) -> None:
    p = Producer(h)
    p.init()
    request = {"transactional_id": TXN, "producer_id": p.pid, "producer_epoch": p.epoch, "group_id": "g"}
    assert h.call(add_offsets_to_txn, 3, request).error_code == E.NONE
    (state,) = h.call(describe_transactions, 0, {"transactional_ids": [TXN]}).transaction_states
    assert [(t.topic, t.partitions) for t in state.topics] == [(OFFSETS_TOPIC, [partition_for("g", 1)])]


@pytest.mark.parametrize("version", [0, 3, 4, 5])
def test_end_txn_without_a_transaction(h: Harness, version: int) -> None:
    p = Producer(h)
    p.init()
    response = p.end(True, version=version)
    assert response.error_code == E.INVALID_TXN_STATE
    assert (response.producer_id, response.producer_epoch) == (-1, -1)
    unknown = h.call(
        end_txn,
        version,
        {"transactional_id": "nope", "producer_id": 1, "producer_epoch": 0, "committed": True},
    )
    assert unknown.error_code == E.INVALID_PRODUCER_ID_MAPPING


def test_list_transactions_filters_by_state_and_producer(h: Harness) -> None:
    a, b = Producer(h, "a"), Producer(h, "b")
    a.init()
    b.init()
    a.add("t", 0)
    response = h.call(list_transactions, 1, {"state_filters": ["Ongoing", "Nope"], "producer_id_filters": []})
    assert [
        (t.transactional_id, t.producer_id, t.transaction_state) for t in response.transaction_states
    ] == [("a", a.pid, "Ongoing")]
    assert response.unknown_state_filters == ["Nope"]
    by_pid = h.call(list_transactions, 0, {"state_filters": [], "producer_id_filters": [b.pid]})
    assert [t.transactional_id for t in by_pid.transaction_states] == ["b"]


@pytest.mark.parametrize(
    ("pattern", "code", "listed"),
    [
        (None, E.NONE, ["app-1", "app-2", "other"]),
        ("", E.NONE, ["app-1", "app-2", "other"]),
        ("app-.*", E.NONE, ["app-1", "app-2"]),
        ("app", E.NONE, []),  # the whole id must match (Pattern.matcher(id).matches())
        ("app-[", E.INVALID_REGULAR_EXPRESSION, []),
    ],
)
def test_list_transactions_v2_filters_by_transactional_id_pattern(
    h: Harness, pattern: str | None, code: int, listed: list[str]
) -> None:
    """KIP-1152 (Kafka 4.1): TransactionStateManager.listTransactionStates."""
    for transactional_id in ("app-1", "app-2", "other"):
        Producer(h, transactional_id).init()
    request: dict[str, Any] = {"state_filters": [], "producer_id_filters": []}
    request["transactional_id_pattern"] = pattern
    response = h.call(list_transactions, 2, request)
    assert response.error_code == code
    assert sorted(t.transactional_id for t in response.transaction_states) == listed


def test_describe_an_unknown_transactional_id(h: Harness) -> None:
    unknown, empty = h.call(describe_transactions, 0, {"transactional_ids": ["nope", ""]}).transaction_states
    assert (unknown.error_code, unknown.transactional_id) == (E.TRANSACTIONAL_ID_NOT_FOUND, "nope")
    assert empty.error_code == E.INVALID_REQUEST


@pytest.mark.parametrize(("version", "minimum"), [(3, 1), (4, 0)])
def test_api_versions_reports_transaction_version_2(h: Harness, version: int, minimum: int) -> None:
    response = h.call(api_versions, version, {"client_software_name": "t", "client_software_version": "1"})
    supported = {f.name: (f.min_version, f.max_version) for f in response.supported_features}
    assert supported["transaction.version"] == (minimum, 2)
    finalized = {f.name: (f.min_version_level, f.max_version_level) for f in response.finalized_features}
    assert finalized["transaction.version"] == (2, 2)
    assert response.finalized_features_epoch >= 0
    ranges = {k.api_key: k.max_version for k in response.api_keys}
    assert (ranges[0], ranges[26]) == (13, 5)  # Kafka 4.2's (the default --emulate)


def test_transaction_version_1_looks_like_a_3x_cluster() -> None:
    h = Harness(transaction_version=1)
    response = h.call(api_versions, 4, {"client_software_name": "t", "client_software_version": "1"})
    assert {f.name: f.max_version_level for f in response.finalized_features}["transaction.version"] == 1
    ranges = {k.api_key: k.max_version for k in response.api_keys}
    assert (ranges[0], ranges[26]) == (11, 4)


def txn_offset_commit_request(p: Producer, offset: int) -> dict[str, Any]:
    return {
        "transactional_id": TXN,
        "group_id": "g",
        "producer_id": p.pid,
        "producer_epoch": p.epoch,
        "generation_id": -1,
        "member_id": "",
        "group_instance_id": None,
        "topics": [
            {
                "name": "t",
                "partitions": [
                    {
                        "partition_index": 0,
                        "committed_offset": offset,
                        "committed_leader_epoch": -1,
                        "committed_metadata": "",
                    }
                ],
            }
        ],
    }


def committed_offset(h: Harness) -> int:
    request = {"group_id": "g", "topics": [{"name": "t", "partition_indexes": [0]}]}
    return int(h.call(offset_fetch, 1, request).topics[0].partitions[0].committed_offset)


def txn_offset_commit_code(h: Harness, p: Producer, version: int, offset: int) -> int:
    response = h.call(txn_offset_commit, version, txn_offset_commit_request(p, offset))
    return int(response.topics[0].partitions[0].error_code)


@pytest.mark.parametrize(("version", "code"), [(3, E.INVALID_TXN_STATE), (4, E.TRANSACTION_ABORTABLE)])
def test_txn_offset_commit_needs_the_offsets_partition_in_the_transaction(
    h: Harness, version: int, code: ErrorCode
) -> None:
    p = Producer(h)
    p.init()
    p.add("t", 0)
    assert txn_offset_commit_code(h, p, version, 7) == code
    request = {"transactional_id": TXN, "producer_id": p.pid, "producer_epoch": p.epoch, "group_id": "g"}
    assert h.call(add_offsets_to_txn, 3, request).error_code == E.NONE
    assert txn_offset_commit_code(h, p, version, 7) == E.NONE
    assert committed_offset(h) == -1  # pending until the transaction commits
    assert p.end(True).error_code == E.NONE
    assert committed_offset(h) == 7


def test_txn_offset_commit_v5_adds_the_offsets_partition_and_commits_with_end_txn_v5(h: Harness) -> None:
    p = Producer(h)
    p.init()
    assert p.produce("t", 0, version=12) == E.NONE
    assert txn_offset_commit_code(h, p, 5, 9) == E.NONE
    (state,) = h.call(describe_transactions, 0, {"transactional_ids": [TXN]}).transaction_states
    assert sorted(t.topic for t in state.topics) == [OFFSETS_TOPIC, "t"]
    ended = p.end(True, version=5)
    assert (ended.error_code, ended.producer_epoch) == (E.NONE, p.epoch + 1)
    assert committed_offset(h) == 9


def test_an_aborted_transaction_drops_its_offsets(h: Harness) -> None:
    p = Producer(h)
    p.init()
    p.produce("t", 0, version=12)
    assert txn_offset_commit_code(h, p, 5, 9) == E.NONE
    assert p.end(False, version=5).error_code == E.NONE
    assert committed_offset(h) == -1


@pytest.mark.parametrize(("release", "kept"), [("3.9", True), ("4.1", True), ("4.2", False)])
def test_fencing_an_open_transaction_keeps_its_start_time_until_4_2(release: str, kept: bool) -> None:
    """A second producer's InitProducerId aborts the open transaction (51, then its retry
    succeeds, epoch 2 under 3.9's coordinator); DescribeTransactions then shows the aborted
    transaction's start time under 3.9-4.1, whose TransactionMetadata.completeTransitionTo
    copies no start time for Empty, and -1 under 4.2 (the corpus' txn.fencing cases)."""
    h = Harness(emulate=release)
    h.broker.topics.create("t", 1)
    first, second = Producer(h), Producer(h)
    first.init()
    start = h.clock()
    first.add("t", 0)
    h.clock.now += 1000
    assert second.init().error_code == E.CONCURRENT_TRANSACTIONS
    assert second.init().error_code == E.NONE
    (state,) = h.call(describe_transactions, 0, {"transactional_ids": [TXN]}).transaction_states
    assert (state.transaction_state, state.transaction_start_time_ms) == ("Empty", start if kept else -1)


def test_a_partition_leaders_v5_add_is_a_transaction_version_2_add(h: Harness) -> None:
    """AddPartitionsToTxn v5 is what a broker process sends for a TV2 producer's Produce or
    TxnOffsetCommit when another process coordinates its transaction (shim.processes.verification):
    the partitions join under TV2 (the epoch is bumped when it ends), and the group's
    `__consumer_offsets` partition is known by count, this process not having made the topic yet."""
    p = Producer(h)
    assert p.init().error_code == E.NONE
    assert h.broker.topics.get(OFFSETS_TOPIC) is None
    offsets = partition_for("g", h.broker.group_service.offsets_log.partitions)

    def add(topic: str, partition: int) -> int:
        txn = {"transactional_id": TXN, "producer_id": p.pid, "producer_epoch": p.epoch, "verify_only": False}
        txn["topics"] = [{"name": topic, "partitions": [partition]}]
        answer = h.call(add_partitions_to_txn, 5, {"transactions": [txn]})
        assert answer.error_code == E.NONE
        (topic_result,) = answer.results_by_transaction[0].topic_results
        return int(topic_result.results_by_partition[0].partition_error_code)

    assert add("t", 1) == E.NONE
    assert add(OFFSETS_TOPIC, offsets) == E.NONE
    assert add(OFFSETS_TOPIC, 10_000) == E.UNKNOWN_TOPIC_OR_PARTITION
    ended = p.end(True, version=5)  # TV2: the answer bumps the epoch
    assert (ended.error_code, ended.producer_epoch) == (E.NONE, p.epoch + 1)
