"""The group journal turns what the broker saw (requests, deadlines, the group's shape after
them) into the console's timeline; driven here with a fake clock, no broker."""

from __future__ import annotations

import pytest

from kafka_shim.shim.group_journal import GroupJournal, GroupShape


def classic(state: str, members: set[str], generation: int) -> GroupShape:
    return GroupShape("classic", state, frozenset(members), generation)


# (what happens, the events it adds as (kind, member, detail))
CASES = [
    (
        "a first member joins and the group forms",
        [
            ("request", 10, "JoinGroup", "m1", "NONE"),
            ("observe", 10, classic("CompletingRebalance", {"m1"}, 1)),
        ],
        [
            ("request", "m1", "JoinGroup"),
            ("joined", "m1", "member added (JoinGroup from m1)"),
            ("state", "", "(none) -> CompletingRebalance (JoinGroup from m1)"),
            ("rebalance", "", "rebalance #1: JoinGroup from m1"),
        ],
    ),
    (
        "a session expires: the member is removed and the next generation counts a rebalance",
        [
            ("observe", 0, classic("Stable", {"m1", "m2"}, 1)),
            ("deadline", "session", "m2"),
            ("observe", 20, classic("PreparingRebalance", {"m1"}, 1)),
            ("request", 30, "JoinGroup", "m1", "NONE"),
            ("observe", 30, classic("CompletingRebalance", {"m1"}, 2)),
        ],
        [
            ("left", "m2", "member removed (session timeout of m2)"),
            ("state", "", "Stable -> PreparingRebalance (session timeout of m2)"),
            ("request", "m1", "JoinGroup"),
            ("state", "", "PreparingRebalance -> CompletingRebalance (JoinGroup from m1)"),
            ("rebalance", "", "rebalance #2: session timeout of m2"),
        ],
    ),
    (
        "heartbeats of one member fold into one event; an error does not fold",
        [
            ("request", 1, "Heartbeat", "m1", "NONE"),
            ("request", 2, "Heartbeat", "m1", "NONE"),
            ("request", 3, "Heartbeat", "m1", "REBALANCE_IN_PROGRESS"),
        ],
        [("heartbeat", "m1", "Heartbeat"), ("request", "m1", "Heartbeat -> REBALANCE_IN_PROGRESS")],
    ),
]


@pytest.mark.parametrize(("steps", "expected"), [(s, e) for _, s, e in CASES], ids=[c[0] for c in CASES])
def test_events(steps: list[tuple], expected: list[tuple[str, str, str]]) -> None:
    journal = GroupJournal()
    for step in steps:
        if step[0] == "request":
            journal.request(step[1], "g", *step[2:])
        elif step[0] == "deadline":
            journal.deadline("g", step[1], step[2])
        else:
            journal.observe(step[1], "g", step[2])
    observed = [(e.kind, e.member_id, e.detail) for e in journal.events("g")]
    # The first case's group is new; others start from an observed shape whose own events are
    # not what they are about.
    assert observed[-len(expected) :] == expected


@pytest.mark.parametrize("api", ["Heartbeat", "OffsetCommit"])
def test_repeated_requests_fold_with_a_count_and_the_last_time(api: str) -> None:
    journal = GroupJournal()
    for now in (100, 200, 300):
        journal.request(now, "g", api, "m1", "NONE")
    (event,) = journal.events("g")
    assert (event.count, event.at_ms, event.last_ms) == (3, 100, 300)


def test_a_different_answer_or_member_is_a_new_event() -> None:
    journal = GroupJournal()
    journal.request(100, "g", "OffsetCommit", "m1", "NONE")
    journal.request(200, "g", "OffsetCommit", "m1", "ILLEGAL_GENERATION")
    journal.request(300, "g", "OffsetCommit", "m2", "ILLEGAL_GENERATION")
    details = [(e.member_id, e.detail, e.count) for e in journal.events("g")]
    assert details == [
        ("m1", "OffsetCommit", 1),
        ("m1", "OffsetCommit -> ILLEGAL_GENERATION", 1),
        ("m2", "OffsetCommit -> ILLEGAL_GENERATION", 1),
    ]


def test_memory_is_bounded_per_group_and_in_groups() -> None:
    journal = GroupJournal(per_group=3, max_groups=2)
    for n in range(10):
        journal.request(n, "g1", "OffsetCommit", f"m{n}", "NONE")
    assert len(journal.events("g1")) == 3
    journal.request(0, "g2", "OffsetCommit", "m", "NONE")
    journal.request(0, "g3", "OffsetCommit", "m", "NONE")
    assert journal.events("g1") == [] and len(journal.events("g3")) == 1
