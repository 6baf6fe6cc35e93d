"""The group service routes by the group's type: each entry point of the classic and consumer
protocols, asked about a group of each type (made through the handlers, as clients make them),
is answered by the coordinator of that type or refused as Kafka refuses it."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.shim.coordinator.consumer import HeartbeatRequest as ConsumerHeartbeat
from kafka_shim.shim.groups.service import GroupService
from tests.helpers import Harness
from tests.shim.handlers import test_group_migration as migration
from tests.shim.handlers import test_share_groups as share

NOT_FOUND = ErrorCode.GROUP_ID_NOT_FOUND


def classic_group() -> tuple[Harness, str]:
    h = migration.new_harness()
    migration.classic_group_with_a_commit(h)
    return h, migration.GROUP


def consumer_group() -> tuple[Harness, str]:
    h = migration.new_harness()
    assert migration.consumer_beat(h, "m1", 0).error_code == 0
    return h, migration.GROUP


def share_group() -> tuple[Harness, str]:
    h = share.harness()
    assert share.join(h, "m1").error_code == 0
    return h, share.GROUP


def no_group() -> tuple[Harness, str]:
    return migration.new_harness(), "nobody"


def rejoin(service: GroupService, group_id: str) -> ErrorCode:
    """A consumer-protocol heartbeat of a member that is not joining (epoch 3)."""
    beat = ConsumerHeartbeat(group_id=group_id, member_id="m9", member_epoch=3)
    return service.consumer_heartbeat(beat, 0).error


MAKERS: dict[str, Callable[[], tuple[Harness, str]]] = {
    "classic": classic_group,
    "consumer": consumer_group,
    "share": share_group,
    "none": no_group,
}

# kind: (group_type, described by DescribeGroups, ConsumerGroupDescribe's error, a
# non-joining consumer heartbeat's error, ListGroups' type)
CASES: dict[str, tuple[str | None, bool, ErrorCode, ErrorCode, str | None]] = {
    "classic": ("classic", True, NOT_FOUND, NOT_FOUND, "classic"),
    "consumer": ("consumer", False, ErrorCode.NONE, ErrorCode.UNKNOWN_MEMBER_ID, "consumer"),
    "share": ("share", False, NOT_FOUND, NOT_FOUND, "share"),
    "none": (None, True, NOT_FOUND, NOT_FOUND, None),
}


@pytest.mark.parametrize("kind", list(CASES))
def test_each_entry_point_answers_by_the_groups_type(kind: str) -> None:
    h, group_id = MAKERS[kind]()
    service = h.broker.group_service
    group_type, classic_described, described_error, rejoined, listed = CASES[kind]
    assert service.group_type(group_id) == group_type
    assert (service.describe_classic(group_id) is not None) == classic_described
    assert service.describe_consumer_group(group_id).error == described_error
    assert rejoin(service, group_id) == rejoined
    types = [g.group_type for g in service.list_groups([], []) if g.group_id == group_id]
    assert types == ([] if listed is None else [listed])


def test_list_groups_filters_by_type_and_state() -> None:
    h, _ = consumer_group()
    service = h.broker.group_service
    assert [g.group_type for g in service.list_groups([], ["consumer"])] == ["consumer"]
    assert service.list_groups([], ["classic"]) == []
    assert service.list_groups(["Dead"], []) == []


def test_offsets_of_a_consumer_group_are_fenced_by_member_epoch() -> None:
    h, group_id = consumer_group()
    service = h.broker.group_service
    assert service.fetch_refusal(group_id, "m1", 99) == ErrorCode.STALE_MEMBER_EPOCH
    assert service.fetch_refusal(group_id, "stranger", 1) == ErrorCode.UNKNOWN_MEMBER_ID
    assert service.fetch_refusal("no-such-group", "anyone", 1) == ErrorCode.NONE
