"""Write, then change memory, for the coordinators that keep no undo of their own: a KIP-848
consumer group's and a share group's calls, the share partitions' delivery state and the
transaction coordinator's own deadlines. A write that fails (the storage seam) is answered
with Kafka's code, and memory is then what a broker restarted from the same data directory
reads; once writes succeed again the same call goes through. Producers idle for
producer.id.expiration.ms are forgotten under --memory too."""

from __future__ import annotations

import itertools
import shutil
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.protocol.messages.share_fetch import ACCEPT
from kafka_shim.protocol.share_state_records import SharePartitionKey
from kafka_shim.shim.effects import COORDINATOR_RETRY_BACKOFF_MS
from kafka_shim.shim.handlers import consumer_group_heartbeat, delete_groups, share_group_heartbeat
from kafka_shim.shim.transactions.coordinator import DEADLINE_RETRY_MS
from kafka_shim.storage.faults import FAULTS
from tests.batches import batch
from tests.helpers import Harness
from tests.shim.handlers.test_group_migration import PARTITIONS, classic_group_with_a_commit, classic_join
from tests.shim.handlers.test_share_groups import GROUP as SHARE_GROUP
from tests.shim.handlers.test_share_groups import fetch as share_fetch
from tests.shim.handlers.test_share_groups import join as share_join
from tests.shim.handlers.test_share_groups import produce
from tests.shim.handlers.test_transactions import Producer

GROUP = "g"  # a consumer group
NOT_COORDINATOR, COORDINATOR_NOT_AVAILABLE = ErrorCode.NOT_COORDINATOR, ErrorCode.COORDINATOR_NOT_AVAILABLE
SESSION_MS = 45_000  # group.consumer.session.timeout.ms and group.share.session.timeout.ms


@pytest.fixture
def h(tmp_path: Path) -> Iterator[Harness]:
    harness = Harness(data_dir=tmp_path / "data")
    harness.broker.topics.create("t", PARTITIONS, {})
    harness.broker.group_configs[SHARE_GROUP] = {"share.auto.offset.reset": "earliest"}
    yield harness
    FAULTS.clear()
    harness.broker.close()


def assert_as_restarted(h: Harness, tmp_path: Path, view: Callable[[Harness], object]) -> None:
    """What `view` reads of `h` is what it reads of a broker started from a copy of `h`'s data
    directory as it is now."""
    copy = tmp_path / "restarted"
    shutil.rmtree(copy, ignore_errors=True)
    shutil.copytree(tmp_path / "data", copy)
    (copy / ".lock").unlink(missing_ok=True)
    again = Harness(data_dir=copy)
    again.broker.group_configs[SHARE_GROUP] = {"share.auto.offset.reset": "earliest"}
    try:
        assert view(h) == view(again)
    finally:
        again.broker.close()


# --- KIP-848 consumer groups and share groups -------------------------------------------------


def beat(h: Harness, member: str, epoch: int) -> int:
    request: dict[str, Any] = {"group_id": GROUP, "member_id": member, "member_epoch": epoch}
    if epoch == 0:
        request |= {"rebalance_timeout_ms": 30_000, "subscribed_topic_names": ["t"], "topic_partitions": []}
    return int(h.call(consumer_group_heartbeat, 1, request).error_code)


def consumer_group(h: Harness) -> object:
    return h.broker.consumer_groups.describe(GROUP, h.broker.group_service.topics)


def group_kind(h: Harness) -> object:
    """The group's type, its classic generation and its consumer-group side (online migration);
    classic members are memory only (they join again after a restart)."""
    classic = h.broker.groups.group(GROUP)
    return h.broker.group_service.group_type(GROUP), classic and classic.generation_id, consumer_group(h)


def emptied(h: Harness) -> None:
    assert (beat(h, "m1", 0), beat(h, "m1", -1)) == (0, 0)


def share_state(h: Harness) -> tuple[object, object]:
    """The share group and its share partition as the log holds them (acquired records are
    written as available: a lock lives in memory only)."""
    group = h.broker.group_service.share.group(SHARE_GROUP)
    topic = h.broker.topics.get("t")
    assert topic is not None
    partition = h.broker.share_partitions.get(SharePartitionKey(SHARE_GROUP, topic.topic_id, 0))
    return group, None if partition is None else (partition.start_offset, partition.state_batches())


def fetched(h: Harness, epoch: int, acks: Sequence[tuple[int, int, list[int]]] = ()) -> Any:
    """ShareFetch of "t"-0 by member s1: the partition's answer."""
    return share_fetch(h, "s1", epoch, acks).responses[0].partitions[0]


def joined_with_records(h: Harness) -> None:
    assert share_join(h, "s1").error_code == 0
    produce(h, b"a", b"b")


# The share session's next epochs: every request moves it on, a refused acknowledgement too.
session_epochs = itertools.count(1)


def acquired(h: Harness) -> None:
    global session_epochs
    joined_with_records(h)
    assert fetched(h, 0).acquired_records
    session_epochs = itertools.count(1)


@dataclass
class Case:
    name: str
    before: Callable[[Harness], object]  # what is written first
    call: Callable[[Harness], int]  # the call whose records fail: its error code
    code: int  # what it answers while the disk is full
    view: Callable[[Harness], object]  # what must be as the log has it


CASES = [
    Case(
        "first join makes no group",
        lambda h: None,
        lambda h: beat(h, "m1", 0),
        NOT_COORDINATOR,
        consumer_group,
    ),
    Case(
        "a second member's join",
        lambda h: beat(h, "m1", 0),
        lambda h: beat(h, "m2", 0),
        NOT_COORDINATOR,
        consumer_group,
    ),
    Case("a leave", lambda h: beat(h, "m1", 0), lambda h: beat(h, "m1", -1), NOT_COORDINATOR, consumer_group),
    Case("an upgrade", classic_group_with_a_commit, lambda h: beat(h, "k", 0), NOT_COORDINATOR, group_kind),
    Case(
        "an empty group turning classic",
        emptied,
        lambda h: classic_join(h).error_code,
        NOT_COORDINATOR,
        group_kind,
    ),
    Case(
        "a share join", lambda h: None, lambda h: share_join(h, "s1").error_code, NOT_COORDINATOR, share_state
    ),
    Case(
        "an acquisition",
        joined_with_records,
        lambda h: fetched(h, 0).error_code,
        COORDINATOR_NOT_AVAILABLE,
        share_state,
    ),
    Case(
        "an acknowledgement",
        acquired,
        lambda h: fetched(h, next(session_epochs), [(0, 1, [ACCEPT])]).acknowledge_error_code,
        COORDINATOR_NOT_AVAILABLE,
        share_state,
    ),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_a_group_call_not_written_leaves_memory_as_the_log_has_it(
    h: Harness, tmp_path: Path, case: Case
) -> None:
    case.before(h)
    FAULTS.arm("log")
    assert case.call(h) == case.code
    FAULTS.clear()
    assert_as_restarted(h, tmp_path, case.view)
    assert case.call(h) == ErrorCode.NONE


def test_a_consumer_group_session_expiry_not_written_is_retried(h: Harness, tmp_path: Path) -> None:
    assert beat(h, "m1", 0) == 0
    FAULTS.arm("log")
    h.clock.now += SESSION_MS
    h.broker.timers.tick(h.clock())
    group = h.broker.consumer_groups.group(GROUP)
    assert group is not None and "m1" in group.members
    FAULTS.clear()
    assert_as_restarted(h, tmp_path, consumer_group)
    h.clock.now += COORDINATOR_RETRY_BACKOFF_MS
    h.broker.timers.tick(h.clock())
    group = h.broker.consumer_groups.group(GROUP)
    assert group is not None and not group.members


def test_records_whose_acquisition_was_not_written_are_delivered_later(h: Harness) -> None:
    joined_with_records(h)
    FAULTS.arm("log")
    refused = fetched(h, 0)
    assert (refused.error_code, refused.acquired_records) == (COORDINATOR_NOT_AVAILABLE, [])
    FAULTS.clear()
    ranges = fetched(h, 0).acquired_records
    assert [(r.first_offset, r.last_offset, r.delivery_count) for r in ranges] == [(0, 1, 1)]


def delete_share_group(h: Harness) -> int:
    return int(h.call(delete_groups, 2, {"groups_names": [SHARE_GROUP]}).results[0].error_code)


def emptied_share_group(h: Harness) -> None:
    acquired(h)
    h.call(share_group_heartbeat, 1, {"group_id": SHARE_GROUP, "member_id": "s1", "member_epoch": -1})


@pytest.mark.parametrize(
    ("writes_before_the_fault", "code", "state_left", "group_left"),
    [(0, COORDINATOR_NOT_AVAILABLE, True, True), (1, NOT_COORDINATOR, False, True)],
    ids=["state write fails", "group write fails"],
)
def test_a_share_group_is_deleted_after_its_state(
    h: Harness, tmp_path: Path, writes_before_the_fault: int, code: int, state_left: bool, group_left: bool
) -> None:
    """Kafka 4.1/4.2's GroupCoordinatorService.deleteGroups deletes a share group's state first
    (deleteShareGroups, the persister's deleteState) and only the groups whose state went
    (updateResponseAndGetNonErrorGroupList) with the others: a state write that fails answers
    its error and leaves group and state; a group write that fails leaves the group without
    state. Either way DeleteGroups succeeds once writes do."""
    emptied_share_group(h)
    FAULTS.arm("log", after=writes_before_the_fault)
    assert delete_share_group(h) == code
    FAULTS.clear()
    group, partition = share_state(h)
    assert (partition is not None, group is not None) == (state_left, group_left)
    assert_as_restarted(h, tmp_path, share_state)
    assert delete_share_group(h) == ErrorCode.NONE
    assert share_state(h) == (None, None)


# --- the transaction coordinator's own deadlines -------------------------------------------


def test_a_transaction_timing_out_while_full_stays_ongoing_and_is_aborted_later(
    h: Harness, tmp_path: Path
) -> None:
    producer = Producer(h, "tx")
    assert producer.init(timeout_ms=10_000).error_code == 0
    assert producer.add("t", 0) == {0: 0}
    assert producer.produce("t", 0) == 0
    FAULTS.arm("log")
    h.clock.now += 10_000
    h.broker.timers.tick(h.clock())  # the abort's PrepareAbort record fails: nothing changes
    assert h.broker.timers.watch_deadlines() == h.clock() + DEADLINE_RETRY_MS
    FAULTS.clear()
    described = h.broker.transactions.describe("tx")
    assert described is not None and described.state.name == "ONGOING"
    assert_as_restarted(h, tmp_path, lambda h: h.broker.transactions.describe("tx"))
    h.clock.now += DEADLINE_RETRY_MS
    h.broker.timers.tick(h.clock())
    described = h.broker.transactions.describe("tx")
    assert described is not None and described.state.name == "COMPLETE_ABORT"


# --- producer expiry in memory ---------------------------------------------------------------


def test_idle_producers_are_forgotten_in_memory_too() -> None:
    expiration_ms, interval_ms = 60_000, 10_000
    h = Harness(producer_id_expiration_ms=expiration_ms, producer_id_expiration_check_interval_ms=interval_ms)
    topic = h.broker.topics.create("t", 1, {})
    log = topic.partitions[0]
    log.append(batch(b"a", producer_id=7, producer_epoch=0, base_sequence=0, base_timestamp=h.clock()))
    assert [pid for pid, _ in log.producers] == [7]
    h.clock.now += expiration_ms - interval_ms
    h.broker.timers.tick(h.clock())
    assert [pid for pid, _ in log.producers] == [7]  # idle for less than producer.id.expiration.ms
    h.clock.now += interval_ms
    h.broker.timers.tick(h.clock())
    assert list(log.producers) == []
