"""TxnOffsetCommit end to end through the wire schemas: Kafka's order of checks, the
transaction coordinator's verification answers as each version's client sees them,
offsets pending until the transaction ends (OffsetFetch require_stable), the
transactional batch in `__consumer_offsets`, and replay after a restart.

The transaction coordinator is another part of the broker; its verification reaches
the handler as a function. Here a small table of open transactions answers it the
way Kafka's handleVerifyPartitionsInTransaction does.
"""

from __future__ import annotations

from collections.abc import Coroutine
from pathlib import Path
from typing import Any, NamedTuple, cast

import pytest

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.protocol.record_codec import decode_batches
from kafka_shim.shim.broker import Broker
from kafka_shim.shim.coordinator.coordinator import GroupCoordinator
from kafka_shim.shim.coordinator.types import TopicPartition
from kafka_shim.shim.handlers import txn_offset_commit
from kafka_shim.shim.security.authorization import RULES
from kafka_shim.shim.transactions.markers import write_markers
from kafka_shim.storage.log import PartitionLog
from kafka_shim.storage.offsets_log import OFFSETS_TOPIC
from tests.helpers import Harness, run, subscription

TXN_ID = "txn-1"
PRODUCER = 5000
EPOCH = 4
GROUP = "etl"


class OpenTransaction(NamedTuple):
    producer_id: int
    epoch: int
    partitions: frozenset[TopicPartition]
    completing: bool = False


class Transactions:
    """Open transactions by transactional id, verified as Kafka's coordinator does."""

    def __init__(self) -> None:
        self.open: dict[str, OpenTransaction] = {}
        self.asked: list[TopicPartition] = []

    def __call__(
        self,
        transactional_id: str,
        producer_id: int,
        producer_epoch: int,
        partition: TopicPartition,
        now: int,
    ) -> ErrorCode:
        self.asked.append(partition)
        txn = self.open.get(transactional_id)
        if txn is None or txn.producer_id != producer_id:
            return ErrorCode.INVALID_PRODUCER_ID_MAPPING
        if txn.epoch != producer_epoch:
            return ErrorCode.PRODUCER_FENCED
        if txn.completing:
            return ErrorCode.CONCURRENT_TRANSACTIONS
        return ErrorCode.NONE if partition in txn.partitions else ErrorCode.TRANSACTION_ABORTABLE


@pytest.fixture
def h() -> Harness:
    harness = Harness()
    harness.broker.topics.create("in", 2)
    return harness


def offsets_partition(h: Harness) -> TopicPartition:
    return TopicPartition(OFFSETS_TOPIC, h.broker.group_service.offsets_log.partition_for(GROUP))


def with_offsets_added(h: Harness, **changes: Any) -> Transactions:
    transactions = Transactions()
    transactions.open[TXN_ID] = OpenTransaction(PRODUCER, EPOCH, frozenset({offsets_partition(h)}))._replace(
        **changes
    )
    return transactions


def body(
    partitions: dict[str, list[tuple[int, int]]] | None = None,
    *,
    group: str = GROUP,
    generation: int = -1,
    member: str = "",
    epoch: int = EPOCH,
) -> dict[str, Any]:
    topics = partitions if partitions is not None else {"in": [(0, 10), (1, 20)]}
    return {
        "transactional_id": TXN_ID,
        "group_id": group,
        "producer_id": PRODUCER,
        "producer_epoch": epoch,
        "generation_id": generation,
        "member_id": member,
        "group_instance_id": None,
        "topics": [
            {
                "name": name,
                "partitions": [
                    {
                        "partition_index": p,
                        "committed_offset": o,
                        "committed_leader_epoch": 0,
                        "committed_metadata": "",
                    }
                    for p, o in entries
                ],
            }
            for name, entries in topics.items()
        ],
    }


def commit(
    h: Harness, version: int, request: dict[str, Any], check: Transactions
) -> dict[tuple[str, int], int]:
    """The handler with `check` as the transaction coordinator; errors by partition."""
    api = txn_offset_commit.API
    parsed = api.request.parse(api.request.build(request, version), version)
    coroutine = cast(Coroutine[Any, Any, Any], _respond(h, version, parsed, check))
    response = api.response.parse(api.response.build(run(coroutine), version), version)
    return {(t.name, p.partition_index): p.error_code for t in response.topics for p in t.partitions}


async def _respond(h: Harness, version: int, parsed: Any, check: Transactions) -> dict[str, Any]:
    ctx = h.context(version)
    ctx.rule = RULES["txn_offset_commit"]  # as the dispatcher sets it
    return txn_offset_commit.respond(ctx, parsed, check)


def fetch(h: Harness, version: int, partitions: list[int], stable: bool) -> dict[int, tuple[int, int]]:
    request = {
        "group_id": GROUP,
        "topics": [{"name": "in", "partition_indexes": partitions}],
        "require_stable": stable,
    }
    response = h.call(9, version, request)
    return {p.partition_index: (p.committed_offset, p.error_code) for p in response.topics[0].partitions}


def plain_commit(h: Harness, partition: int, offset: int) -> None:
    request = {
        "group_id": GROUP,
        "topics": [
            {"name": "in", "partitions": [{"partition_index": partition, "committed_offset": offset}]}
        ],
    }
    assert h.call(8, 7, request).topics[0].partitions[0].error_code == ErrorCode.NONE


def write_marker(h: Harness, commit: bool) -> None:
    """The producer's transaction ends as the transaction coordinator ends it: a marker in the
    group's __consumer_offsets partition, which the group coordinator learns of."""
    write_markers(h.broker, PRODUCER, EPOCH, 0, commit, [offsets_partition(h)], h.clock())


def offsets_log_partition(h: Harness) -> PartitionLog:
    log = h.broker.topics.partition(OFFSETS_TOPIC, offsets_partition(h).partition)
    assert log is not None
    return log


# --- the path of a commit ---------------------------------------------------------------------


@pytest.mark.parametrize("version", range(5))
@pytest.mark.parametrize("ends_in_commit", [True, False], ids=["commit", "abort"])
def test_offsets_become_visible_only_when_the_transaction_commits(
    h: Harness, version: int, ends_in_commit: bool
) -> None:
    plain_commit(h, 0, 3)
    check = with_offsets_added(h)
    assert commit(h, version, body(), check) == {("in", 0): 0, ("in", 1): 0}
    assert check.asked == [offsets_partition(h)]
    # read_uncommitted-style fetches see the committed offset; require_stable (v7+) waits.
    assert fetch(h, 6, [0, 1], stable=False) == {0: (3, 0), 1: (-1, 0)}
    unstable = ErrorCode.UNSTABLE_OFFSET_COMMIT
    assert fetch(h, 7, [0, 1], stable=True) == {0: (-1, unstable), 1: (-1, unstable)}
    assert fetch(h, 7, [0, 1], stable=False) == {0: (3, 0), 1: (-1, 0)}

    h.broker.group_service.effects.apply(
        h.broker.groups.complete_transaction(PRODUCER, ends_in_commit, h.clock())
    )
    expected = {0: (10, 0), 1: (20, 0)} if ends_in_commit else {0: (3, 0), 1: (-1, 0)}
    assert fetch(h, 7, [0, 1], stable=True) == expected


def test_the_records_are_a_transactional_batch_of_the_producer(h: Harness) -> None:
    commit(h, 3, body(), with_offsets_added(h))
    (batch,) = decode_batches(offsets_log_partition(h).read(0, 1 << 20))
    header = batch.header
    assert (header.is_transactional, header.producer_id, header.producer_epoch) == (True, PRODUCER, EPOCH)
    assert len(batch.records) == 2


@pytest.mark.parametrize("committed", [True, False], ids=["committed", "open"])
def test_a_restarted_coordinator_replays_the_transaction(h: Harness, committed: bool) -> None:
    plain_commit(h, 0, 3)
    commit(h, 3, body(), with_offsets_added(h))
    if committed:
        write_marker(h, True)
    restarted = GroupCoordinator()
    restarted.load(h.broker.group_service.offsets_log.replay(), h.clock())
    t0 = TopicPartition("in", 0)
    fetched = restarted.fetch_offsets(GROUP, [t0], require_stable=True)[t0]
    if committed:
        assert (fetched.offset, fetched.error) == (10, ErrorCode.NONE)
    else:
        assert fetched.error == ErrorCode.UNSTABLE_OFFSET_COMMIT
        restarted.complete_transaction(PRODUCER, False, h.clock())  # the coordinator aborts it later
        assert restarted.fetch_offsets(GROUP, [t0], require_stable=True)[t0].offset == 3


# --- what each check answers -------------------------------------------------------------------


class Refusal(NamedTuple):
    name: str
    transaction: dict[str, Any] | None  # changes to the open transaction; None: there is none
    epoch: int
    errors_by_version: tuple[ErrorCode, ...]  # v0..v4


E = ErrorCode
REFUSALS = [
    Refusal("no transaction for the id", None, EPOCH, (E.INVALID_PRODUCER_ID_MAPPING,) * 5),
    Refusal("another producer id", {"producer_id": 1}, EPOCH, (E.INVALID_PRODUCER_ID_MAPPING,) * 5),
    Refusal("a fenced epoch", {}, EPOCH - 1, (E.INVALID_PRODUCER_EPOCH,) * 5),
    Refusal("a completing transaction", {"completing": True}, EPOCH, (E.CONCURRENT_TRANSACTIONS,) * 5),
    Refusal(
        "offsets not added to the transaction",
        {"partitions": frozenset()},
        EPOCH,
        (E.INVALID_TXN_STATE,) * 4 + (E.TRANSACTION_ABORTABLE,),
    ),
]


@pytest.mark.parametrize("version", range(5))
@pytest.mark.parametrize("case", REFUSALS, ids=lambda c: c.name)
def test_the_transaction_must_hold_the_offsets_partition(h: Harness, case: Refusal, version: int) -> None:
    check = Transactions() if case.transaction is None else with_offsets_added(h, **case.transaction)
    error = case.errors_by_version[version]
    assert commit(h, version, body(epoch=case.epoch), check) == {("in", 0): error, ("in", 1): error}
    assert fetch(h, 7, [0], stable=True) == {0: (-1, 0)}  # nothing pending


def test_unknown_topics_and_partitions_go_no_further(h: Harness) -> None:
    check = with_offsets_added(h)
    errors = commit(h, 3, body({"in": [(0, 10), (9, 1)], "nope": [(0, 1)]}), check)
    unknown = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    assert errors == {("in", 0): 0, ("in", 9): unknown, ("nope", 0): unknown}
    assert h.broker.topics.get("nope") is None  # not auto-created
    only_unknown = Transactions()
    assert commit(h, 3, body({"nope": [(0, 1)]}), only_unknown) == {("nope", 0): unknown}
    assert only_unknown.asked == []


def test_an_empty_group_id_is_refused_before_the_transaction_is_asked(h: Harness) -> None:
    check = Transactions()
    error = ErrorCode.INVALID_GROUP_ID
    assert commit(h, 3, body(group=""), check) == {("in", 0): error, ("in", 1): error}
    assert check.asked == []


def test_v3_fences_a_member_of_an_older_generation(h: Harness) -> None:
    join = {
        "group_id": GROUP,
        "session_timeout_ms": 10_000,
        "rebalance_timeout_ms": 20_000,
        "member_id": "",
        "protocol_type": "consumer",
        "protocols": [{"name": "range", "metadata": subscription("in")}],
    }
    joined = h.call(11, 3, join)  # v0-3 admit an empty member id directly
    assert joined.error_code == 0
    h.call(14, 3, {"group_id": GROUP, "generation_id": 1, "member_id": joined.member_id, "assignments": []})
    check = with_offsets_added(h)
    stale = commit(h, 3, body(generation=0, member=joined.member_id), check)
    assert set(stale.values()) == {ErrorCode.ILLEGAL_GENERATION}
    current = commit(h, 3, body(generation=1, member=joined.member_id), check)
    assert set(current.values()) == {ErrorCode.NONE}
    # v2 carries no member: Kafka lets it into a group with members.
    assert set(commit(h, 2, body(), check).values()) == {ErrorCode.NONE}


def test_without_a_transaction_coordinator_every_id_is_unknown(h: Harness) -> None:
    """The handler as advertised today: Kafka's answer for an id it holds no state for."""
    response = h.call(28, 3, body())
    errors = {p.error_code for t in response.topics for p in t.partitions}
    assert errors == {ErrorCode.INVALID_PRODUCER_ID_MAPPING}


@pytest.mark.parametrize("committed", [True, False], ids=["committed", "open"])
def test_a_broker_on_disk_restarts_with_the_transactions_outcome(tmp_path: Path, committed: bool) -> None:
    h = Harness(data_dir=tmp_path)
    h.broker.topics.create("in", 2)
    plain_commit(h, 0, 3)
    commit(h, 3, body(), with_offsets_added(h))
    if committed:
        write_marker(h, True)
    h.broker.close()

    again = Broker(h.broker.config, clock=h.clock)
    try:
        t0 = TopicPartition("in", 0)
        fetched = again.groups.fetch_offsets(GROUP, [t0], require_stable=True)[t0]
        assert (fetched.offset, fetched.error) == (
            (10, ErrorCode.NONE) if committed else (-1, ErrorCode.UNSTABLE_OFFSET_COMMIT)
        )
        assert again.groups.fetch_offsets(GROUP, [t0])[t0].offset == (10 if committed else 3)
    finally:
        again.close()
