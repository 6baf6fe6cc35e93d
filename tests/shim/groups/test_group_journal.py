"""The group journal turns what the broker saw (requests, deadlines, the group's shape after
them) into the console's timeline; driven here with a fake clock, no broker."""

from __future__ import annotations

import pytest

from kafka_shim.shim.groups.journal import GroupJournal, GroupShape


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
        "a second member's JoinGroup starts the rebalance: PreparingRebalance shows when it arrives, "
        "and the rebalance names that member, not the one whose join completed it",
        [
            ("observe", 0, classic("Stable", {"m0"}, 1)),
            ("arrived", "JoinGroup", "m1"),  # parked until every member rejoined
            ("observe", 10, classic("PreparingRebalance", {"m0", "m1"}, 1)),
            ("request", 20, "Heartbeat", "m0", "REBALANCE_IN_PROGRESS"),
            ("arrived", "JoinGroup", "m0"),  # completes the join: both answered now
            ("observe", 30, classic("CompletingRebalance", {"m0", "m1"}, 2)),
            ("request", 30, "JoinGroup", "m0", "NONE"),
            ("request", 30, "JoinGroup", "m1", "NONE"),
        ],
        [
            ("joined", "m1", "member added (JoinGroup from m1)"),
            ("state", "", "Stable -> PreparingRebalance (JoinGroup from m1)"),
            ("request", "m0", "Heartbeat -> REBALANCE_IN_PROGRESS"),
            ("state", "", "PreparingRebalance -> CompletingRebalance (JoinGroup from m0)"),
            ("rebalance", "", "rebalance #2: JoinGroup from m1"),
            ("request", "m0", "JoinGroup"),
            ("request", "m1", "JoinGroup"),
        ],
    ),
    (
        "a join without a member id (JoinGroup v0-3) is named by the id it was given",
        [
            ("observe", 0, classic("Stable", {"m0"}, 1)),
            ("arrived", "JoinGroup", ""),
            ("observe", 10, classic("PreparingRebalance", {"m0", "m1"}, 1)),
        ],
        [
            ("joined", "m1", "member added (JoinGroup from m1)"),
            ("state", "", "Stable -> PreparingRebalance (JoinGroup from m1)"),
        ],
    ),
    (
        "three members' interleaved heartbeats and commits fold per member",
        [
            ("observe", 0, classic("Stable", {"m0", "m1", "m2"}, 1)),
            *[("request", 10 + n, "Heartbeat", f"m{n % 3}", "NONE") for n in range(30)],
            *[("request", 50 + n, "OffsetCommit", f"m{n % 3}", "NONE") for n in range(6)],
            *[("request", 60 + n, "Heartbeat", f"m{n % 3}", "NONE") for n in range(6)],
        ],
        [
            ("heartbeat", "m0", "Heartbeat"),
            ("heartbeat", "m1", "Heartbeat"),
            ("heartbeat", "m2", "Heartbeat"),
            ("request", "m0", "OffsetCommit"),
            ("request", "m1", "OffsetCommit"),
            ("request", "m2", "OffsetCommit"),
        ],
    ),
    (
        "a state change ends the folding: later heartbeats are a new event",
        [
            ("observe", 0, classic("Stable", {"m0"}, 1)),
            ("request", 1, "Heartbeat", "m0", "NONE"),
            ("deadline", "session", "m1"),
            ("observe", 2, classic("PreparingRebalance", {"m0"}, 1)),
            ("request", 3, "Heartbeat", "m0", "NONE"),
        ],
        [
            ("heartbeat", "m0", "Heartbeat"),
            ("state", "", "Stable -> PreparingRebalance (session timeout of m1)"),
            ("heartbeat", "m0", "Heartbeat"),
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
        elif step[0] == "arrived":
            journal.arrived("g", step[1], step[2])
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


def test_folded_counts_per_member_whatever_the_interleaving() -> None:
    journal = GroupJournal()
    for n in range(300):
        journal.request(n, "g", "Heartbeat", f"m{n % 3}", "NONE")
    assert [(e.member_id, e.count, e.at_ms, e.last_ms) for e in journal.events("g")] == [
        ("m0", 100, 0, 297),
        ("m1", 100, 1, 298),
        ("m2", 100, 2, 299),
    ]


def test_history_is_kept_by_time_and_bounded_in_count_and_groups() -> None:
    journal = GroupJournal(retention_ms=1_000, max_events=5, max_groups=2)
    journal.request(0, "g1", "JoinGroup", "old", "NONE")
    journal.request(500, "g1", "JoinGroup", "kept", "NONE")
    journal.request(1_200, "g1", "JoinGroup", "new", "NONE")  # "old" is more than 1 s old now
    assert [e.member_id for e in journal.events("g1")] == ["kept", "new"]
    for n in range(10):  # all within the second: the count bounds them
        journal.request(1_300 + n, "g1", "JoinGroup", f"m{n}", "NONE")
    assert [e.member_id for e in journal.events("g1")] == ["m5", "m6", "m7", "m8", "m9"]
    journal.request(1_400, "g2", "JoinGroup", "m", "NONE")
    assert len(journal.events("g1")) == 4  # the count is across groups
    journal.request(1_400, "g3", "JoinGroup", "m", "NONE")
    assert journal.events("g1") == [] and len(journal.events("g3")) == 1
