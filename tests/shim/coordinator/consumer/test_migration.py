"""Classic members inside a consumer group and the online migration (coordinator/consumer/
classic.py and migration.py), on a fake clock. The harness checks after every call that no
partition is held by two members; each test also checks what the members were answered."""

from __future__ import annotations

from typing import Any

import pytest

from kafka_shim.protocol import consumer_protocol
from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.shim.coordinator.consumer import HeartbeatRequest as ConsumerHeartbeat
from kafka_shim.shim.coordinator.consumer import HeartbeatResponse, records
from kafka_shim.shim.coordinator.consumer.classic import JOIN, SYNC
from kafka_shim.shim.coordinator.consumer.member import MemberState
from kafka_shim.shim.coordinator.types import (
    GroupSnapshot,
    HeartbeatRequest,
    JoinRequest,
    JoinResult,
    MemberIdentity,
    MemberSnapshot,
    Protocol,
    SyncRequest,
    SyncResult,
)
from tests.helpers import subscription
from tests.shim.coordinator.consumer.harness import GROUP, REBALANCE_MS, TOPIC, Driver, parts

SESSION_MS = 6_000
GENERATION = 5


def assignment(*partitions: int, version: int = 0) -> bytes:
    return consumer_protocol.encode_assignment({TOPIC.name: list(partitions)} if partitions else {}, version)


def owned_subscription(*partitions: int) -> bytes:
    """ConsumerProtocolSubscription v1, as cooperative clients send it: topics and what they own."""
    body = consumer_protocol.SUBSCRIPTION.build(
        {
            "topics": [TOPIC.name],
            "user_data": None,
            "owned_partitions": [{"topic": TOPIC.name, "partitions": list(partitions)}] if partitions else [],
        },
        1,
    )
    return (1).to_bytes(2, "big") + body


def classic_member(member_id: str, *partitions: int) -> MemberSnapshot:
    return MemberSnapshot(
        member_id,
        None,
        "client",
        "/127.0.0.1",
        REBALANCE_MS,
        SESSION_MS,
        (Protocol("range", subscription(TOPIC.name)),),
        assignment(*partitions),
    )


def classic_group(*members: MemberSnapshot, protocol_type: str = "consumer") -> GroupSnapshot:
    return GroupSnapshot(GROUP, GENERATION, protocol_type, "range", members)


def upgrade(driver: Driver, snapshot: GroupSnapshot, **fields: Any) -> HeartbeatResponse:
    """Consumer-protocol member k joins the classic group `snapshot` describes."""
    request = ConsumerHeartbeat(
        GROUP,
        "k",
        0,
        rebalance_timeout_ms=fields.pop("rebalance_timeout_ms", REBALANCE_MS),
        subscribed_topic_names=(TOPIC.name,),
        owned={},
        **fields,
    )
    response: HeartbeatResponse = driver.apply(
        driver.coordinator.upgrade(snapshot, request, driver.topics, driver.clock.now)
    )
    return response


def upgraded(**config: Any) -> Driver:
    """A classic group of two members (a: 0-2, b: 3-5, generation 5) taken over by k's join."""
    driver = Driver(**config)
    joined = upgrade(driver, classic_group(classic_member("a", 0, 1, 2), classic_member("b", 3, 4, 5)))
    assert (joined.error, joined.member_epoch, joined.assignment) == (ErrorCode.NONE, GENERATION + 1, {})
    return driver


def join(driver: Driver, member: str, metadata: bytes | None = None, **fields: Any) -> JoinResult:
    request = JoinRequest(
        GROUP,
        member,
        fields.pop("session_timeout_ms", SESSION_MS),
        REBALANCE_MS,
        fields.pop("protocol_type", "consumer"),
        fields.pop("protocols", (Protocol("range", metadata or subscription(TOPIC.name)),)),
        **fields,
    )
    result: JoinResult = driver.apply(
        driver.coordinator.classic_join(request, driver.topics, driver.clock.now)
    )
    return result


def sync(driver: Driver, member: str, generation: int, protocol_name: str | None = "range") -> SyncResult:
    request = SyncRequest(GROUP, generation, member, protocol_type="consumer", protocol_name=protocol_name)
    result: SyncResult = driver.apply(
        driver.coordinator.classic_sync(request, driver.topics, driver.clock.now)
    )
    return result


def heartbeat(driver: Driver, member: str, generation: int) -> ErrorCode:
    request = HeartbeatRequest(GROUP, generation, member)
    error: ErrorCode = driver.apply(driver.coordinator.classic_heartbeat(request, driver.clock.now))
    return error


def synced_partitions(result: SyncResult) -> list[int]:
    assert result.error == ErrorCode.NONE, result
    return sorted(p for _, p in consumer_protocol.decode_assignment(result.assignment))


# --- upgrade -------------------------------------------------------------------------------


def test_upgrade_keeps_generation_members_and_assignments_and_writes_them() -> None:
    driver = upgraded()
    group = driver.group
    # k's join moved the group on; the classic members are still where the classic group was.
    assert (group.group_epoch, group.assignment_epoch) == (GENERATION + 1, GENERATION + 1)
    a = group.members["a"]
    assert (a.member_epoch, a.state, a.assigned) == (GENERATION, MemberState.STABLE, parts(0, 1, 2))
    assert a.classic is not None and a.classic.session_timeout_ms == SESSION_MS
    assert a.subscribed_topic_names == (TOPIC.name,)
    # The records alone rebuild the same group, classic metadata included.
    replayed = records.replay(driver.log)[GROUP]
    assert replayed.members == group.members
    assert (replayed.group_epoch, replayed.assignment_epoch) == (GENERATION + 1, GENERATION + 1)
    assert driver.deadlines.earliest() == driver.clock.now + SESSION_MS  # their own session timeout


NOT_FOUND = ErrorCode.GROUP_ID_NOT_FOUND


@pytest.mark.parametrize(
    ("config", "snapshot", "fields", "error"),
    [
        ({"migration_policy": "disabled"}, classic_group(classic_member("a")), {}, NOT_FOUND),
        ({"migration_policy": "downgrade"}, classic_group(classic_member("a")), {}, NOT_FOUND),
        ({}, classic_group(classic_member("a"), protocol_type="connect"), {}, NOT_FOUND),
        ({"max_size": 1}, classic_group(classic_member("a"), classic_member("b")), {}, NOT_FOUND),
        ({}, classic_group(classic_member("a")._replace(assignment=b"\x00\x00\x00")), {}, NOT_FOUND),
        # The join itself is refused: nothing is converted either.
        ({"max_size": 1}, classic_group(classic_member("a")), {}, ErrorCode.GROUP_MAX_SIZE_REACHED),
        ({}, classic_group(classic_member("a")), {"rebalance_timeout_ms": -1}, ErrorCode.INVALID_REQUEST),
    ],
)
def test_upgrade_refused(
    config: dict[str, Any], snapshot: GroupSnapshot, fields: dict[str, Any], error: ErrorCode
) -> None:
    driver = Driver(**config)
    assert upgrade(driver, snapshot, **fields).error == error
    assert driver.coordinator.group(GROUP) is None and driver.log == []


# --- a consumer-protocol member joins: the classic members revoke by rejoining --------------


def test_eager_classic_members_hand_over_partitions_by_rejoining() -> None:
    driver = upgraded()  # k was assigned nothing yet: all still held
    # Sync at the old generation while not revoking: rejoin first.
    assert sync(driver, "a", GENERATION).error == ErrorCode.REBALANCE_IN_PROGRESS
    for name in ("a", "b"):
        assert heartbeat(driver, name, GENERATION) == ErrorCode.REBALANCE_IN_PROGRESS
        # An eager client gave everything up before rejoining (v0 subscription: owns nothing).
        first = join(driver, name)
        assert (first.error, first.generation_id, first.leader, first.protocol_name) == (
            ErrorCode.NONE,
            GENERATION,
            "",
            "range",
        )
        kept = synced_partitions(sync(driver, name, GENERATION))
        assert len(kept) == 2  # one partition is being revoked
        assert driver.group.members[name].state == MemberState.UNREVOKED_PARTITIONS
        assert heartbeat(driver, name, GENERATION) == ErrorCode.REBALANCE_IN_PROGRESS
        second = join(driver, name)
        assert second.generation_id == GENERATION + 1
        assert synced_partitions(sync(driver, name, GENERATION + 1)) == kept
        assert heartbeat(driver, name, GENERATION + 1) == ErrorCode.NONE
    answer = driver.beat("k", GENERATION + 1, owned={})
    assert answer.assignment is not None and len(answer.assignment[TOPIC.topic_id]) == 2
    assert driver.group.state.value == "Stable"
    held = sorted(p for m in driver.group.members.values() for ps in m.assigned.values() for p in ps)
    assert held == list(range(6))


def test_a_cooperative_member_rejoins_owning_what_it_kept() -> None:
    driver = upgraded()
    assert join(driver, "a", owned_subscription(0, 1, 2)).generation_id == GENERATION
    kept = synced_partitions(sync(driver, "a", GENERATION))
    # Still owning the revoked partition: it stays at its generation, revoking.
    assert join(driver, "a", owned_subscription(0, 1, 2)).generation_id == GENERATION
    assert join(driver, "a", owned_subscription(*kept)).generation_id == GENERATION + 1


def test_a_classic_member_waiting_for_freed_partitions_is_told_to_rejoin() -> None:
    driver = upgraded()
    joined = join(driver, "c")
    assert joined.generation_id == GENERATION + 2
    assert driver.group.members["c"].state == MemberState.UNRELEASED_PARTITIONS
    assert synced_partitions(sync(driver, "c", GENERATION + 2)) == []
    assert heartbeat(driver, "c", GENERATION + 2) == ErrorCode.NONE  # a and b still hold them
    for name in ("a", "b"):
        for _ in range(2):
            join(driver, name)
            sync(driver, name, driver.epoch_of(name))
    assert heartbeat(driver, "c", GENERATION + 2) == ErrorCode.REBALANCE_IN_PROGRESS  # now free
    join(driver, "c")
    assert synced_partitions(sync(driver, "c", GENERATION + 2))


# --- new classic members, errors -----------------------------------------------------------


def test_a_new_dynamic_member_is_handed_an_id_first() -> None:
    driver = upgraded()
    required = join(driver, "", require_known_member_id=True)
    assert required.error == ErrorCode.MEMBER_ID_REQUIRED and required.member_id
    assert required.member_id not in driver.group.members
    joined = join(driver, required.member_id)
    assert (joined.error, joined.generation_id) == (ErrorCode.NONE, GENERATION + 2)
    assert driver.group.group_epoch == GENERATION + 2


@pytest.mark.parametrize(
    ("act", "error"),
    [
        (lambda d: sync(d, "a", GENERATION + 1).error, ErrorCode.ILLEGAL_GENERATION),
        (lambda d: heartbeat(d, "a", GENERATION - 1), ErrorCode.ILLEGAL_GENERATION),
        (lambda d: heartbeat(d, "nobody", GENERATION), ErrorCode.UNKNOWN_MEMBER_ID),
        (
            lambda d: sync(d, "a", GENERATION, protocol_name="roundrobin").error,
            ErrorCode.INCONSISTENT_GROUP_PROTOCOL,
        ),
        (lambda d: join(d, "c", protocol_type="connect").error, ErrorCode.INCONSISTENT_GROUP_PROTOCOL),
        (
            lambda d: join(d, "c", protocols=(Protocol("roundrobin", subscription(TOPIC.name)),)).error,
            ErrorCode.INCONSISTENT_GROUP_PROTOCOL,
        ),
        (
            lambda d: join(d, "c", protocols=(Protocol("range", b"\x00"),)).error,
            ErrorCode.INCONSISTENT_GROUP_PROTOCOL,
        ),
    ],
)
def test_classic_requests_refused(act: Any, error: ErrorCode) -> None:
    driver = upgraded()
    written = len(driver.log)
    assert act(driver) == error
    assert len(driver.log) == written


def test_the_consumer_protocol_member_is_not_a_classic_one() -> None:
    driver = upgraded()
    assert heartbeat(driver, "k", GENERATION + 1) == ErrorCode.UNKNOWN_MEMBER_ID
    assert join(driver, "k").error == ErrorCode.UNKNOWN_MEMBER_ID


def test_a_full_group_refuses_a_new_classic_member() -> None:
    driver = upgraded(max_size=3)
    assert join(driver, "c").error == ErrorCode.GROUP_MAX_SIZE_REACHED


def test_commits_of_classic_members_are_fenced_by_generation() -> None:
    driver = upgraded()
    validate = driver.coordinator.validate_commit
    assert validate(GROUP, "a", GENERATION, 2) is None  # any OffsetCommit version
    assert validate(GROUP, "a", GENERATION + 1, 8) == ErrorCode.ILLEGAL_GENERATION


# --- deadlines -----------------------------------------------------------------------------


def test_a_classic_member_expires_on_its_own_session_timeout() -> None:
    driver = upgraded(session_timeout_ms=60_000, migration_policy="upgrade")
    driver.advance(SESSION_MS - 1)
    heartbeat(driver, "a", GENERATION)
    driver.advance(SESSION_MS - 1)
    assert set(driver.group.members) == {"a", "k"}  # b did not heartbeat


def test_a_member_told_to_rejoin_that_does_not_is_removed_after_its_rebalance_timeout() -> None:
    driver = upgraded(session_timeout_ms=10 * REBALANCE_MS)
    for _ in range(REBALANCE_MS // 1000):
        assert heartbeat(driver, "a", GENERATION) == ErrorCode.REBALANCE_IN_PROGRESS
        driver.beat("k", GENERATION + 1)
        heartbeat(driver, "b", GENERATION)
        driver.advance(1000)
    assert "a" not in driver.group.members  # the deadline was not pushed back by its heartbeats
    assert "b" not in driver.group.members


def test_a_member_that_joined_must_sync_within_its_rebalance_timeout() -> None:
    driver = upgraded(session_timeout_ms=10 * REBALANCE_MS)
    join(driver, "a")
    assert (JOIN, GROUP, "a") not in driver.deadlines
    assert (SYNC, GROUP, "a") in driver.deadlines
    assert sync(driver, "a", driver.epoch_of("a")).error == ErrorCode.NONE
    assert (SYNC, GROUP, "a") not in driver.deadlines


# --- downgrade -----------------------------------------------------------------------------


def settled_with_consumer_member(**config: Any) -> Driver:
    driver = upgraded(**config)
    for name in ("a", "b"):
        for _ in range(2):  # the first rejoin revokes, the second moves to the new epoch
            join(driver, name)
            sync(driver, name, driver.epoch_of(name))
    driver.beat("k", GENERATION + 1, owned={})
    assert driver.group.state.value == "Stable"
    return driver


@pytest.mark.parametrize("how", ["leave", "session"])
def test_the_last_consumer_member_gone_downgrades_the_group(how: str) -> None:
    driver = settled_with_consumer_member(session_timeout_ms=SESSION_MS * 2)
    targets = {name: dict(driver.group.target_of(name)) for name in ("a", "b")}
    if how == "leave":
        driver.beat("k", -1)
    else:
        while driver.coordinator.group(GROUP) is not None:
            heartbeat(driver, "a", GENERATION + 1)
            heartbeat(driver, "b", GENERATION + 1)
            driver.advance(SESSION_MS // 2)
    assert driver.coordinator.group(GROUP) is None
    snapshot = driver.downgraded
    assert snapshot is not None
    # No epoch bump for the leave: the classic generation is the one the members are at.
    assert (snapshot.generation_id, snapshot.protocol_type) == (GENERATION + 1, "consumer")
    for member in snapshot.members:
        taken = sorted(p for _, p in consumer_protocol.decode_assignment(member.assignment))
        assert taken == sorted(targets[member.member_id][TOPIC.topic_id])
        assert member.session_timeout_ms == SESSION_MS
    assert records.replay(driver.log) == {}  # every record of the group is tombstoned
    assert driver.deadlines.earliest() is None


@pytest.mark.parametrize(("config"), [{"migration_policy": "upgrade"}, {"classic_max_size": 1}])
def test_no_downgrade_when_the_policy_or_the_classic_size_forbids(config: dict[str, Any]) -> None:
    driver = settled_with_consumer_member(**config)
    driver.beat("k", -1)
    assert set(driver.group.members) == {"a", "b"} and driver.downgraded is None
    assert heartbeat(driver, "a", GENERATION + 1) == ErrorCode.REBALANCE_IN_PROGRESS


def test_a_classic_leave_removes_the_member() -> None:
    driver = settled_with_consumer_member()
    left = driver.apply(
        driver.coordinator.classic_leave(
            GROUP, [MemberIdentity("a"), MemberIdentity("nobody")], driver.topics, driver.clock.now
        )
    )
    assert [e for _, e in left.members] == [ErrorCode.NONE, ErrorCode.UNKNOWN_MEMBER_ID]
    assert set(driver.group.members) == {"b", "k"}


def test_a_static_classic_member_back_with_a_new_id_replaces_its_old_self() -> None:
    driver = upgraded(migration_policy="upgrade")
    assert join(driver, "s1", group_instance_id="s").error == ErrorCode.NONE
    written = len(driver.log)
    assert join(driver, "s2", group_instance_id="s").error == ErrorCode.FENCED_INSTANCE_ID
    assert len(driver.log) == written
    back = join(driver, "", group_instance_id="s")
    assert back.error == ErrorCode.NONE and back.member_id not in ("", "s1")
    assert "s1" not in driver.group.members and driver.group.static_member("s") is not None
