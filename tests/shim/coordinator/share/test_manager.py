"""The share-group manager: membership, epochs, assignment and records, on a fake clock."""

from __future__ import annotations

import uuid

import pytest

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.protocol.offsets_records import decode_record, encode_record
from kafka_shim.shim.coordinator.consumer.types import TopicImage, TopicInfo
from kafka_shim.shim.coordinator.share import records
from kafka_shim.shim.coordinator.share.config import ShareGroupConfig
from kafka_shim.shim.coordinator.share.group import ShareGroupState
from kafka_shim.shim.coordinator.share.manager import (
    ShareGroupManager,
    ShareHeartbeat,
    ShareSessionTimer,
)

T1 = TopicInfo(uuid.UUID(int=1), "t1", 2)
T2 = TopicInfo(uuid.UUID(int=2), "t2", 1)
TOPICS = TopicImage([T1, T2])
CONFIG = ShareGroupConfig(session_timeout_ms=1000, heartbeat_interval_ms=100, max_size=2)


def _manager() -> ShareGroupManager:
    return ShareGroupManager(lambda group_id: CONFIG)


def _join(manager: ShareGroupManager, member: str, topics: tuple[str, ...] = ("t1",), now: int = 0) -> int:
    answer = manager.heartbeat(
        ShareHeartbeat("g", member, 0, subscribed_topic_names=topics), TOPICS, now
    ).response
    assert answer.error == ErrorCode.NONE
    return answer.member_epoch


@pytest.mark.parametrize(
    ("beat", "error"),
    [
        (ShareHeartbeat("", "m", 0, subscribed_topic_names=("t1",)), ErrorCode.INVALID_REQUEST),
        (ShareHeartbeat("g", "", 0, subscribed_topic_names=("t1",)), ErrorCode.INVALID_REQUEST),
        (ShareHeartbeat("g", "m", 0), ErrorCode.INVALID_REQUEST),
        (ShareHeartbeat("g", "m", -2), ErrorCode.INVALID_REQUEST),
        (ShareHeartbeat("g", "m", 0, rack_id="", subscribed_topic_names=("t1",)), ErrorCode.INVALID_REQUEST),
        (ShareHeartbeat("nope", "m", 1), ErrorCode.GROUP_ID_NOT_FOUND),
        (ShareHeartbeat("g", "stranger", 1), ErrorCode.UNKNOWN_MEMBER_ID),
        (ShareHeartbeat("g", "stranger", -1), ErrorCode.UNKNOWN_MEMBER_ID),
        (ShareHeartbeat("g", "a", 7), ErrorCode.FENCED_MEMBER_EPOCH),
        (ShareHeartbeat("g", "c", 0, subscribed_topic_names=("t1",)), ErrorCode.GROUP_MAX_SIZE_REACHED),
    ],
)
def test_refusals_change_nothing(beat: ShareHeartbeat, error: ErrorCode) -> None:
    manager = _manager()
    _join(manager, "a")
    _join(manager, "b")
    group = manager.group("g")
    assert group is not None
    before = (group.group_epoch, dict(group.members))
    result = manager.heartbeat(beat, TOPICS, 10)
    assert result.response.error == error
    assert (result.records, result.timers) == ((), ())
    assert (group.group_epoch, group.members) == before


def test_every_member_is_assigned_every_subscribed_partition() -> None:
    manager = _manager()
    first = manager.heartbeat(ShareHeartbeat("g", "a", 0, subscribed_topic_names=("t1", "t2")), TOPICS, 0)
    second = manager.heartbeat(ShareHeartbeat("g", "b", 0, subscribed_topic_names=("t1",)), TOPICS, 0)
    assert first.response.assignment == {T1.topic_id: frozenset({0, 1}), T2.topic_id: frozenset({0})}
    assert second.response.assignment == {T1.topic_id: frozenset({0, 1})}
    assert (first.response.member_epoch, second.response.member_epoch) == (1, 2)
    assert second.timers == ((ShareSessionTimer("g", "b"), 1000),)
    # a steady heartbeat: same epoch, no assignment sent, nothing written
    steady = manager.heartbeat(ShareHeartbeat("g", "a", 1), TOPICS, 50)
    assert (steady.response.member_epoch, steady.response.assignment, steady.records) == (1, None, ())


def test_new_partitions_reach_members_at_their_next_heartbeat() -> None:
    manager = _manager()
    epoch = _join(manager, "a")
    grown = TopicImage([T1._replace(partitions=3), T2])
    answer = manager.heartbeat(ShareHeartbeat("g", "a", epoch), grown, 10).response
    assert answer.assignment == {T1.topic_id: frozenset({0, 1, 2})}
    assert answer.member_epoch == epoch + 1


def test_leave_and_session_expiry_remove_members() -> None:
    manager = _manager()
    _join(manager, "a")
    _join(manager, "b")
    left = manager.heartbeat(ShareHeartbeat("g", "a", -1), TOPICS, 10)
    assert (left.response.error, left.response.member_epoch) == (ErrorCode.NONE, -1)
    assert left.timers == ((ShareSessionTimer("g", "a"), None),)
    expired = manager.on_timer(ShareSessionTimer("g", "b"), 1000)
    assert len(expired.records) == 5  # three member tombstones, the group and target epochs
    group = manager.group("g")
    assert group is not None and group.state is ShareGroupState.EMPTY
    assert manager.delete("g").response == ErrorCode.NONE
    assert manager.group("g") is None


def test_delete_refuses_a_group_with_members() -> None:
    manager = _manager()
    _join(manager, "a")
    assert manager.delete("g").response == ErrorCode.NON_EMPTY_GROUP
    assert manager.delete("other").response == ErrorCode.GROUP_ID_NOT_FOUND


def test_records_replay_to_the_same_groups() -> None:
    manager = _manager()
    written = []
    for beat in [
        ShareHeartbeat("g", "a", 0, rack_id="r", subscribed_topic_names=("t1", "t2"), client_id="c"),
        ShareHeartbeat("g", "b", 0, subscribed_topic_names=("t1",)),
        ShareHeartbeat("g", "b", -1),
    ]:
        # through Kafka's bytes, as __consumer_offsets holds them
        written += [decode_record(*encode_record(r)) for r in manager.heartbeat(beat, TOPICS, 0).records]
    replayed = ShareGroupManager(lambda group_id: CONFIG)
    loaded = replayed.load(written, 500)
    assert replayed.group("g") == manager.group("g")
    assert loaded.timers == ((ShareSessionTimer("g", "a"), 1500),)
    group = manager.group("g")
    assert group is not None
    assert records.replay(written + records.group_tombstones(group)) == {}


def test_a_rejoin_gets_its_assignment_again_without_moving_the_epoch() -> None:
    manager = _manager()
    epoch = _join(manager, "a")
    again = manager.heartbeat(
        ShareHeartbeat("g", "a", 0, subscribed_topic_names=("t1",)), TOPICS, 10
    ).response
    assert (again.member_epoch, again.assignment) == (epoch, {T1.topic_id: frozenset({0, 1})})
