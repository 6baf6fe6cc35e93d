"""Offset commits and fetches with generation fencing, retention, and the admin APIs."""

from __future__ import annotations

import pytest

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.shim.coordinator.state import GroupState
from kafka_shim.shim.coordinator.types import CommitRequest, MemberIdentity, OffsetCommit, TopicPartition

from .harness import GROUP, Harness

S = GroupState
T0 = TopicPartition("t", 0)
OTHER = TopicPartition("other", 0)
DAY_MS = 24 * 3600 * 1000


def commit(
    h: Harness, generation: int = -1, member: str = "", group: str = GROUP, **offsets: int
) -> dict[TopicPartition, ErrorCode]:
    wanted = {T0: OffsetCommit(offsets.get("t", 7))} if not offsets.get("other") else {OTHER: OffsetCommit(3)}
    return h.apply(h.coordinator.commit_offsets(CommitRequest(group, wanted, generation, member), h.now))


def test_member_commit_is_fenced_by_generation_and_member() -> None:
    h = Harness()
    ids = h.stable_group("a")
    assert commit(h, 1, ids["a"]) == {T0: ErrorCode.NONE}
    assert h.coordinator.fetch_offsets(GROUP, [T0])[T0].offset == 7
    assert commit(h, 0, ids["a"]) == {T0: ErrorCode.ILLEGAL_GENERATION}
    assert commit(h, 1, "ghost") == {T0: ErrorCode.UNKNOWN_MEMBER_ID}
    assert commit(h) == {T0: ErrorCode.UNKNOWN_MEMBER_ID}  # no generation, but the group has members


def test_commit_while_rebalancing() -> None:
    h = Harness()
    ids = h.stable_group("a", "b")
    h.join(ids["a"], client="a")
    assert commit(h, 2, ids["b"]) == {T0: ErrorCode.NONE}  # PreparingRebalance: still accepted
    h.join(ids["b"], client="b")
    assert h.state == S.COMPLETING_REBALANCE
    assert commit(h, 3, ids["b"]) == {T0: ErrorCode.REBALANCE_IN_PROGRESS}


def test_standalone_commit_creates_an_empty_group() -> None:
    h = Harness()
    assert commit(h, group="solo") == {T0: ErrorCode.NONE}
    assert h.group("solo").state == S.EMPTY
    assert h.coordinator.fetch_offsets("solo", None) == {T0: h.coordinator.fetch_offsets("solo", [T0])[T0]}
    assert commit(h, 3, "m", group="nowhere") == {T0: ErrorCode.ILLEGAL_GENERATION}


def test_metadata_too_large() -> None:
    h = Harness()
    request = CommitRequest("solo", {T0: OffsetCommit(1, metadata="x" * 4097)})
    assert h.apply(h.coordinator.commit_offsets(request, h.now)) == {T0: ErrorCode.OFFSET_METADATA_TOO_LARGE}


def test_fetch_of_nothing_committed_answers_minus_one() -> None:
    h = Harness()
    fetched = h.coordinator.fetch_offsets("unknown", [T0], require_stable=True)[T0]
    assert (fetched.offset, fetched.metadata, fetched.error) == (-1, "", ErrorCode.NONE)
    assert h.coordinator.fetch_offsets("unknown", None) == {}


def test_offsets_of_an_empty_group_expire_after_retention_then_the_group_goes() -> None:
    h = Harness(offsets_retention_ms=DAY_MS, offsets_retention_check_interval_ms=60_000)
    ids = h.stable_group("a")
    commit(h, 1, ids["a"])
    h.apply(h.coordinator.leave_group(GROUP, [MemberIdentity(ids["a"])], h.now))
    h.advance(DAY_MS - 60_000)
    assert h.coordinator.fetch_offsets(GROUP, [T0])[T0].offset == 7
    h.advance(60_000)
    assert h.coordinator.group(GROUP) is None


def test_a_retention_check_removes_a_new_group_whose_only_member_is_pending() -> None:
    """Kafka's cleanupGroupMetadata kills an Empty group without offsets whatever its pending
    members: a check that lands between MEMBER_ID_REQUIRED and the rejoin leaves the rejoin
    no group, answered UNKNOWN_MEMBER_ID; the client starts over with no member id."""
    h = Harness(offsets_retention_check_interval_ms=10_000)
    first = h.join(client="app", session_ms=30_000)
    assert first.value.error == ErrorCode.MEMBER_ID_REQUIRED and h.state == GroupState.EMPTY
    h.advance(10_000)  # the check, well inside the pending id's session timeout
    assert h.coordinator.group(GROUP) is None
    assert h.join(first.value.member_id, client="app").value.error == ErrorCode.UNKNOWN_MEMBER_ID
    assert h.join(client="app").value.error == ErrorCode.MEMBER_ID_REQUIRED


def test_stable_consumer_group_keeps_offsets_of_subscribed_topics() -> None:
    h = Harness(offsets_retention_ms=60_000, offsets_retention_check_interval_ms=1000)
    ids = h.stable_group("a")
    commit(h, 1, ids["a"])
    commit(h, 1, ids["a"], other=1)
    for _ in range(14):
        h.advance(5000)
        assert h.heartbeat(ids["a"], 1) == ErrorCode.NONE
    offsets = h.coordinator.fetch_offsets(GROUP, None)
    assert set(offsets) == {T0}  # "other" is not subscribed: it expired


def test_kip848_group_offsets_expire_by_kafkas_consumer_group_rules() -> None:
    """ConsumerGroup.offsetExpirationCondition: offsets of subscribed topics stay whatever
    their age; the others age from their commit, not from when the group became empty."""
    h = Harness(offsets_retention_ms=60_000, offsets_retention_check_interval_ms=1000)
    h.consumer_groups["kip848"] = frozenset({"t"})
    commit(h, group="kip848")  # committed as the OffsetCommit handler does, after the epoch check
    commit(h, group="kip848", other=1)
    h.advance(59_000)
    assert set(h.coordinator.fetch_offsets("kip848", None)) == {T0, OTHER}
    h.advance(1000)
    assert set(h.coordinator.fetch_offsets("kip848", None)) == {T0}  # "other": 60 s after its commit
    h.advance(10 * 60_000)
    assert set(h.coordinator.fetch_offsets("kip848", None)) == {T0}  # subscribed: kept
    h.consumer_groups["kip848"] = frozenset()  # its last member left
    h.advance(1000)
    assert h.coordinator.group("kip848") is None  # aged from its commit, long ago


def test_describe_and_list() -> None:
    h = Harness()
    ids = h.stable_group("a")
    described = h.coordinator.describe_group(GROUP)
    assert (described.state, described.protocol_type, described.protocol_name) == (
        "Stable",
        "consumer",
        "range",
    )
    assert described.members[0].assignment == b"assignment-a" and described.members[0].metadata
    h.join(ids["a"], client="a", protocols=(*h.group().members[ids["a"]].protocols,))
    commit(h, group="solo")
    assert [g.group_id for g in h.coordinator.list_groups()] == [GROUP, "solo"]
    assert [g.group_id for g in h.coordinator.list_groups(states=["EMPTY"])] == ["solo"]
    assert h.coordinator.list_groups(types=["consumer"]) == []
    assert len(h.coordinator.list_groups(types=["Classic"])) == 2
    assert h.coordinator.describe_group("nope").state == "Dead"


def test_describe_outside_stable_hides_metadata_and_assignment() -> None:
    h = Harness()
    ids = h.stable_group("a", "b")
    h.join(ids["a"], client="a")
    described = h.coordinator.describe_group(GROUP)
    assert described.state == "PreparingRebalance" and described.protocol_name == ""
    assert all(m.metadata == b"" and m.assignment == b"" for m in described.members)


def test_delete_groups() -> None:
    h = Harness()
    h.stable_group("a")
    commit(h, group="solo")
    results = h.apply(h.coordinator.delete_groups([GROUP, "solo", "nope"], h.now))
    assert results == {
        GROUP: ErrorCode.NON_EMPTY_GROUP,
        "solo": ErrorCode.NONE,
        "nope": ErrorCode.GROUP_ID_NOT_FOUND,
    }
    assert h.coordinator.fetch_offsets("solo", [T0])[T0].offset == -1


def test_offset_delete() -> None:
    h = Harness()
    ids = h.stable_group("a")
    commit(h, 1, ids["a"])
    commit(h, 1, ids["a"], other=1)
    error, errors = h.apply(h.coordinator.delete_offsets(GROUP, [T0, OTHER], h.now))
    assert error == ErrorCode.NONE
    assert errors == {T0: ErrorCode.GROUP_SUBSCRIBED_TO_TOPIC, OTHER: ErrorCode.NONE}
    assert h.apply(h.coordinator.delete_offsets("nope", [T0], h.now)) == (ErrorCode.GROUP_ID_NOT_FOUND, {})
    commit(h, group="solo")
    assert h.apply(h.coordinator.delete_offsets("solo", [T0], h.now)) == (
        ErrorCode.NONE,
        {T0: ErrorCode.NONE},
    )
    assert h.group("solo").state == S.EMPTY  # kept until the retention check


def test_a_group_whose_offsets_were_deleted_stays_empty_until_the_retention_check() -> None:
    """Kafka's OffsetMetadataManager.deleteOffsets only writes tombstones; the shard's
    cleanupGroupMetadata, every offsets.retention.check.interval.ms (600000), deletes a group
    left Empty without offsets. Until then DescribeGroups sees it Empty, ListGroups lists it
    and DeleteGroups deletes it (what `kafka-consumer-groups.sh --delete-offsets` then
    `--describe` / `--delete` see); after it, the group is Dead and unknown."""
    h = Harness()
    assert h.coordinator.config.offsets_retention_check_interval_ms == 600_000
    commit(h, group="solo")  # the group's creation schedules the first check
    h.advance(1000)
    deleted = h.apply(h.coordinator.delete_offsets("solo", [T0], h.now))
    assert deleted == (ErrorCode.NONE, {T0: ErrorCode.NONE})
    assert h.coordinator.describe_group("solo").state == "Empty"
    assert [g.group_id for g in h.coordinator.list_groups()] == ["solo"]
    h.advance(600_000 - 1001)
    assert h.coordinator.describe_group("solo").state == "Empty"
    h.advance(1)
    assert h.coordinator.describe_group("solo").state == "Dead"
    assert h.coordinator.list_groups() == []
    assert h.apply(h.coordinator.delete_groups(["solo"], h.now)) == {"solo": ErrorCode.GROUP_ID_NOT_FOUND}


@pytest.mark.parametrize(
    ("removes_empty_group", "state_after"),
    [
        (True, "Dead"),  # Kafka 3.9's GroupCoordinator.handleDeleteOffsets -> cleanupGroupMetadata
        (False, "Empty"),  # the new coordinator: tombstones only, the retention check buries it
    ],
)
def test_deleting_an_empty_groups_last_offsets_removes_it_as_the_release_does(
    removes_empty_group: bool, state_after: str
) -> None:
    h = Harness(offset_delete_removes_empty_group=removes_empty_group)
    commit(h, group="solo")
    commit(h, group="solo", other=1)
    assert h.apply(h.coordinator.delete_offsets("solo", [T0], h.now)) == (
        ErrorCode.NONE,
        {T0: ErrorCode.NONE},
    )
    assert h.coordinator.describe_group("solo").state == "Empty"  # an offset is left: it stays
    assert h.apply(h.coordinator.delete_offsets("solo", [OTHER], h.now)) == (
        ErrorCode.NONE,
        {OTHER: ErrorCode.NONE},
    )
    assert h.coordinator.describe_group("solo").state == state_after
    listed = [g.group_id for g in h.coordinator.list_groups()]
    assert listed == ([] if removes_empty_group else ["solo"])
    deleted = h.apply(h.coordinator.delete_groups(["solo"], h.now))
    assert deleted == {"solo": ErrorCode.GROUP_ID_NOT_FOUND if removes_empty_group else ErrorCode.NONE}


def test_deleting_offsets_of_a_group_with_members_never_removes_it() -> None:
    h = Harness(offset_delete_removes_empty_group=True)
    ids = h.stable_group("a")
    commit(h, 1, ids["a"], other=1)
    assert h.apply(h.coordinator.delete_offsets(GROUP, [OTHER], h.now)) == (
        ErrorCode.NONE,
        {OTHER: ErrorCode.NONE},
    )
    assert h.coordinator.describe_group(GROUP).state == "Stable"


def test_delete_groups_after_deleting_the_offsets_succeeds_before_the_check() -> None:
    h = Harness()
    commit(h, group="solo")
    h.apply(h.coordinator.delete_offsets("solo", [T0], h.now))
    assert h.apply(h.coordinator.delete_groups(["solo"], h.now)) == {"solo": ErrorCode.NONE}
    assert h.coordinator.describe_group("solo").state == "Dead"


def test_offset_delete_in_non_consumer_group_with_members() -> None:
    h = Harness()
    h.join(client="w", protocol_type="connect", require_known=False)
    assert h.apply(h.coordinator.delete_offsets(GROUP, [T0], h.now)) == (ErrorCode.NON_EMPTY_GROUP, {})
