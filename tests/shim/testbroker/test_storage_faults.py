"""A broker on disk whose writes fail (the storage seam, `storage.faults`): every request
is answered with Kafka's error for it and the broker keeps serving; the coordinators'
memory is put back when their records are not written (DESIGN.md: write, then change
memory); a deadline whose records cannot be written fires again later; once writes
succeed again everything goes on without a restart."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.shim.coordinator.state import GroupState
from kafka_shim.shim.coordinator.types import TopicPartition
from kafka_shim.shim.effects import COORDINATOR_RETRY_BACKOFF_MS
from kafka_shim.storage.faults import FAULTS
from tests.batches import make_batch
from tests.helpers import Harness, fetch_from_start, subscription
from tests.shim.handlers.test_transactions import Producer

NOT_COORDINATOR = ErrorCode.NOT_COORDINATOR
SESSION_MS = 10_000


@pytest.fixture
def h(tmp_path: Path) -> Iterator[Harness]:
    harness = Harness(data_dir=tmp_path)
    harness.broker.topics.create("t", 1)
    yield harness
    FAULTS.clear()
    harness.broker.close()


def join(h: Harness, member_id: str = "") -> Any:
    body = {
        "group_id": "g",
        "session_timeout_ms": SESSION_MS,
        "rebalance_timeout_ms": 20_000,
        "member_id": member_id,
        "protocol_type": "consumer",
        "protocols": [{"name": "range", "metadata": subscription("t")}],
    }
    return h.call(11, 3, body)


def sync(h: Harness, joined: Any) -> Any:
    body = {
        "group_id": "g",
        "generation_id": joined.generation_id,
        "member_id": joined.member_id,
        "assignments": [{"member_id": joined.member_id, "assignment": b"a"}],
    }
    return h.call(14, 3, body)


def commit(h: Harness, offset: int, joined: Any | None = None) -> list[int]:
    body = {
        "group_id": "g",
        "generation_id_or_member_epoch": -1 if joined is None else joined.generation_id,
        "member_id": "" if joined is None else joined.member_id,
        "topics": [{"name": "t", "partitions": [{"partition_index": 0, "committed_offset": offset}]}],
    }
    return [p.error_code for t in h.call(8, 8, body).topics for p in t.partitions]


def committed(h: Harness) -> int | None:
    found = h.broker.groups.fetch_offsets("g", [TopicPartition("t", 0)]).get(TopicPartition("t", 0))
    return None if found is None or found.offset < 0 else found.offset


def produce(h: Harness, value: bytes) -> Any:
    body = {
        "acks": -1,
        "timeout_ms": 1000,
        "topic_data": [{"name": "t", "partition_data": [{"index": 0, "records": make_batch([value])}]}],
    }
    return h.call(0, 9, body).responses[0].partition_responses[0]


def fetched(h: Harness) -> int:
    partition = h.call(1, 11, fetch_from_start("t")).responses[0].partitions[0]
    assert partition.error_code == 0
    return int(partition.high_watermark)


def test_commits_are_refused_with_not_coordinator_and_change_nothing(h: Harness) -> None:
    assert commit(h, 5) == [0]
    FAULTS.arm("log")
    assert commit(h, 9) == [NOT_COORDINATOR]
    assert committed(h) == 5
    FAULTS.clear()
    assert commit(h, 9) == [0] and committed(h) == 9


def test_a_first_commit_that_cannot_be_written_leaves_no_group(h: Harness) -> None:
    FAULTS.arm("log")
    assert commit(h, 5) == [NOT_COORDINATOR]
    assert h.broker.groups.group("g") is None


def test_a_leader_sync_that_cannot_be_written_leaves_the_rebalance_where_it_was(h: Harness) -> None:
    joined = join(h)
    FAULTS.arm("log")
    assert sync(h, joined).error_code == NOT_COORDINATOR
    group = h.broker.groups.group("g")
    assert group is not None and group.state == GroupState.COMPLETING_REBALANCE
    FAULTS.clear()
    answer = sync(h, joined)
    assert (answer.error_code, answer.assignment) == (0, b"a")


def test_a_leave_that_cannot_be_written_is_refused_and_the_member_stays(h: Harness) -> None:
    joined = join(h)
    sync(h, joined)
    FAULTS.arm("log")
    body = {"group_id": "g", "members": [{"member_id": joined.member_id, "group_instance_id": None}]}
    assert h.call(13, 3, body).error_code == NOT_COORDINATOR
    group = h.broker.groups.group("g")
    assert group is not None and joined.member_id in group.members and group.state == GroupState.STABLE


def test_a_session_expiry_while_full_is_retried_and_the_broker_goes_on(h: Harness) -> None:
    joined = join(h)
    sync(h, joined)
    assert commit(h, 3, joined) == [0]
    FAULTS.arm("log")
    h.clock.now += SESSION_MS
    h.broker.timers.tick(h.clock())  # the member's removal writes the group's record: it fails
    group = h.broker.groups.group("g")
    assert group is not None and joined.member_id in group.members
    assert h.broker.timers.watch_deadlines() == h.clock() + COORDINATOR_RETRY_BACKOFF_MS
    # Meanwhile the broker serves: metadata, fetches, and refusals of what must be written.
    assert h.call(3, 9, {"topics": [{"name": "t"}]}).topics[0].error_code == 0
    assert fetched(h) == 0
    assert produce(h, b"x").error_code == ErrorCode.KAFKA_STORAGE_ERROR
    FAULTS.clear()
    h.clock.now += COORDINATOR_RETRY_BACKOFF_MS
    h.broker.timers.tick(h.clock())
    group = h.broker.groups.group("g")
    assert group is not None and not group.members and group.state == GroupState.EMPTY
    assert committed(h) == 3


def test_produce_resumes_once_space_is_back_and_acknowledged_records_survive(
    h: Harness, tmp_path: Path
) -> None:
    assert produce(h, b"a").error_code == 0
    FAULTS.arm("log")
    refused = produce(h, b"b")
    assert (refused.error_code, refused.base_offset) == (ErrorCode.KAFKA_STORAGE_ERROR, -1)
    FAULTS.clear()
    assert (produce(h, b"c").error_code, fetched(h)) == (0, 2)
    h.broker.close()
    again = Harness(data_dir=tmp_path)
    try:
        assert fetched(again) == 2
    finally:
        again.broker.close()


def transaction_state(h: Harness) -> str:
    described = h.call(65, 0, {"transactional_ids": ["tx"]}).transaction_states[0]
    return str(described.transaction_state)


def test_transaction_calls_that_cannot_be_written_are_refused_and_change_nothing(h: Harness) -> None:
    producer = Producer(h, "tx")
    FAULTS.arm("log")
    assert producer.init().error_code == NOT_COORDINATOR
    assert h.call(65, 0, {"transactional_ids": ["tx"]}).transaction_states[0].error_code != 0  # unknown id
    FAULTS.clear()
    assert producer.init().error_code == 0
    FAULTS.arm("log")
    assert producer.add("t", 0) == {0: NOT_COORDINATOR}
    assert transaction_state(h) == "Empty"
    FAULTS.clear()
    assert producer.add("t", 0) == {0: 0}
    assert producer.produce("t", 0) == 0
    FAULTS.arm("log")
    assert producer.end(commit=True).error_code == NOT_COORDINATOR
    assert transaction_state(h) == "Ongoing"
    FAULTS.clear()
    assert producer.end(commit=True).error_code == 0
    assert transaction_state(h) == "CompleteCommit"


def test_a_completion_that_cannot_be_written_is_retried(h: Harness) -> None:
    producer = Producer(h, "tx")
    producer.init()
    producer.add("t", 0)
    producer.produce("t", 0)
    # The PrepareCommit record and the marker go through; the CompleteCommit record does not.
    FAULTS.arm("log", after=2)
    assert producer.end(commit=True).error_code == 0
    assert transaction_state(h) == "PrepareCommit"
    FAULTS.clear()
    deadline = h.broker.timers.watch_deadlines()
    assert deadline is not None
    h.clock.now = deadline
    h.broker.timers.tick(h.clock())
    assert transaction_state(h) == "CompleteCommit"


def test_offset_expiry_while_full_keeps_the_offsets_until_it_is_written(tmp_path: Path) -> None:
    h = Harness(data_dir=tmp_path, offsets_retention_minutes=1, offsets_retention_check_interval_ms=1_000)
    try:
        h.broker.topics.create("t", 1)
        assert commit(h, 5) == [0]
        FAULTS.arm("log")
        h.clock.now += 2 * 60_000
        h.broker.timers.tick(h.clock())
        assert committed(h) == 5 and h.broker.groups.group("g") is not None
        FAULTS.clear()
        h.clock.now += COORDINATOR_RETRY_BACKOFF_MS
        h.broker.timers.tick(h.clock())
        assert committed(h) is None and h.broker.groups.group("g") is None
    finally:
        FAULTS.clear()
        h.broker.close()
