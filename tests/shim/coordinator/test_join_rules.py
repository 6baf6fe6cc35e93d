"""JoinGroup rules: member ids, errors, protocol vote, delayed and initial joins."""

from __future__ import annotations

import pytest

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.shim.coordinator.state import GroupState
from kafka_shim.shim.coordinator.types import Protocol

from .harness import GROUP, REBALANCE_MS, SESSION_MS, Harness

S = GroupState


def test_member_id_required_hands_out_an_id_and_keeps_it_pending() -> None:
    h = Harness()
    first = h.join(client="app")
    assert first.value.error == ErrorCode.MEMBER_ID_REQUIRED
    assert first.value.member_id == "app-1" and first.value.generation_id == -1
    assert h.group().members == {} and h.group().pending_members == {"app-1"}
    second = h.join("app-1", client="app")
    assert second.value.error == ErrorCode.NONE and second.value.member_id == "app-1"
    assert h.group().pending_members == set()


def test_v0_to_v3_join_with_empty_member_id_is_admitted_directly() -> None:
    h = Harness()
    reply = h.join(client="old", require_known=False)
    assert reply.value.error == ErrorCode.NONE and reply.value.member_id == "old-1"
    assert reply.value.generation_id == 1  # generations start at 1


def test_pending_member_holds_the_join_until_it_joins_or_expires() -> None:
    h = Harness()
    ids = h.stable_group("a", "c")
    rejoin = h.join(ids["a"], client="a")  # leader rejoin: rebalance
    assert h.join(client="b").value.error == ErrorCode.MEMBER_ID_REQUIRED
    h.join(ids["c"], client="c")  # every known member is back, but an id handed out is unused
    h.advance(SESSION_MS - 1)
    assert not rejoin.answered
    h.advance(1)  # the pending id expires after the session timeout
    assert rejoin.value.error == ErrorCode.NONE and h.state == S.COMPLETING_REBALANCE


def test_only_the_leader_receives_the_member_list() -> None:
    h = Harness()
    a, _ = h.join_new("a")
    b, b_join = h.join_new("b")
    a_join = h.join(a, client="a")
    assert [m.member_id for m in a_join.value.members] == [a, b]
    assert b_join.value.members == ()


def test_protocol_vote_among_protocols_every_member_supports() -> None:
    h = Harness()
    rr, rng, sticky = Protocol("roundrobin", b""), Protocol("range", b""), Protocol("sticky", b"")
    a, _ = h.join_new("a", protocols=(sticky, rr, rng))
    _b, _ = h.join_new("b", protocols=(rng, rr))
    _c, c_join = h.join_new("c", protocols=(rr, rng))
    h.join(a, client="a", protocols=(sticky, rr, rng))
    # sticky is not common; a and c prefer roundrobin, b prefers range.
    assert c_join.value.protocol_name == "roundrobin"
    assert h.group().protocol_name == "roundrobin"


@pytest.mark.parametrize(
    ("protocol_type", "protocols"),
    [("connect", (Protocol("range", b""),)), ("consumer", (Protocol("cooperative-sticky", b""),))],
    ids=["other-type", "no-common-protocol"],
)
def test_inconsistent_group_protocol(protocol_type: str, protocols: tuple[Protocol, ...]) -> None:
    h = Harness()
    h.stable_group("a")
    reply = h.join(client="b", protocol_type=protocol_type, protocols=protocols)
    assert reply.value.error == ErrorCode.INCONSISTENT_GROUP_PROTOCOL
    assert h.state == S.STABLE


def test_empty_protocol_type_or_list_is_inconsistent_even_for_a_new_group() -> None:
    h = Harness()
    assert h.join(protocol_type="").value.error == ErrorCode.INCONSISTENT_GROUP_PROTOCOL
    assert h.join(protocols=()).value.error == ErrorCode.INCONSISTENT_GROUP_PROTOCOL


def test_empty_group_id_is_invalid_everywhere() -> None:
    h = Harness()
    assert h.join(group="").value.error == ErrorCode.INVALID_GROUP_ID
    assert h.sync("m", 1, group="").value.error == ErrorCode.INVALID_GROUP_ID
    assert h.heartbeat("m", 1, group="") == ErrorCode.INVALID_GROUP_ID
    assert h.apply(h.coordinator.leave_group("", [], h.now)).error == ErrorCode.INVALID_GROUP_ID
    assert h.apply(h.coordinator.delete_offsets("", [], h.now))[0] == ErrorCode.INVALID_GROUP_ID


@pytest.mark.parametrize("session_ms", [5999, 1_800_001])
def test_session_timeout_outside_broker_bounds(session_ms: int) -> None:
    h = Harness()
    assert h.join(session_ms=session_ms).value.error == ErrorCode.INVALID_SESSION_TIMEOUT
    assert h.coordinator.group(GROUP) is None


def test_unknown_member_ids() -> None:
    h = Harness()
    assert h.join("ghost").value.error == ErrorCode.UNKNOWN_MEMBER_ID  # no such group
    h.stable_group("a")
    assert h.join("ghost", client="x").value.error == ErrorCode.UNKNOWN_MEMBER_ID
    assert h.sync("ghost", 1).value.error == ErrorCode.UNKNOWN_MEMBER_ID


def test_group_max_size() -> None:
    h = Harness(max_group_size=2)
    h.stable_group("a", "b")
    third = h.join(client="c")  # refused before it is even handed a member id
    assert third.value.error == ErrorCode.GROUP_MAX_SIZE_REACHED
    assert third.value.member_id == "" and len(h.group().members) == 2


def test_rebalance_timeout_removes_members_that_did_not_rejoin_and_not_sooner() -> None:
    h = Harness()
    ids = h.stable_group("a", "b")
    rejoin = h.join(ids["a"], client="a")
    for _ in range(REBALANCE_MS // 5000 - 1):  # b stays alive with heartbeats but never rejoins
        assert h.heartbeat(ids["b"], 2) == ErrorCode.REBALANCE_IN_PROGRESS
        h.advance(5000)
    h.heartbeat(ids["b"], 2)
    h.advance(4999)
    assert not rejoin.answered and ids["b"] in h.group().members
    h.advance(1)
    assert rejoin.value.error == ErrorCode.NONE
    assert [m.member_id for m in rejoin.value.members] == [ids["a"]]
    assert ids["b"] not in h.group().members and h.group().generation_id == 3


def test_join_completes_the_moment_the_last_member_rejoins() -> None:
    h = Harness(initial_rebalance_delay_ms=0)
    ids = h.stable_group("a", "b")
    first = h.join(ids["a"], client="a")
    second = h.join(ids["b"], client="b")  # same instant: no timer needed
    assert first.answered and second.answered


def test_initial_delay_waits_for_more_members_then_completes() -> None:
    h = Harness(initial_rebalance_delay_ms=3000)
    _, a_join = h.join_new("a")
    h.advance(2000)
    _, b_join = h.join_new("b")  # arrives during the delay: it is extended once more
    h.advance(1000)
    assert not a_join.answered  # the first delay ran out, but a member was added meanwhile
    h.advance(2999)
    assert not a_join.answered
    h.advance(1)
    assert a_join.value.generation_id == b_join.value.generation_id == 1
    assert len(a_join.value.members) == 2


def test_initial_delay_is_capped_by_the_rebalance_timeout() -> None:
    h = Harness(initial_rebalance_delay_ms=3000)
    _, a_join = h.join_new("a", rebalance_ms=4000)
    h.advance(2000)
    h.join_new("b", rebalance_ms=4000)
    h.advance(1000)  # first delay over; only 1000 ms of the rebalance timeout remain
    assert not a_join.answered
    h.advance(1000)
    assert a_join.answered and h.state == S.COMPLETING_REBALANCE


def test_initial_delay_applies_only_to_groups_forming_from_empty() -> None:
    h = Harness(initial_rebalance_delay_ms=3000)
    _, a_join = h.join_new("a")
    h.advance(3000)
    a = a_join.value.member_id
    h.sync(a, 1, {a: b""})
    rejoin = h.join(a, client="a")
    assert rejoin.answered  # the only member rejoined: no delay
