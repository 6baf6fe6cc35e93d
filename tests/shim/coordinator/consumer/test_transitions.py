"""Every transition of the consumer-group coordinator's table, one row each, on a fake clock.

A row is a list of steps; each step acts (a heartbeat, a join, the clock moving) and says
what must follow: the error, the member epoch answered, the partitions of topic `t` in the
answered assignment (None: no assignment sent), the group's state and epoch.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest

from kafka_shim.protocol.errors import ErrorCode
from tests.shim.coordinator.consumer.harness import REBALANCE_MS, TOPIC, Driver, parts

SESSION_MS = 10_000
NOT_SENT = None


@dataclass
class Step:
    member: str = ""
    epoch: int | None = None  # None: the member's current epoch
    fields: dict[str, Any] = field(default_factory=dict)
    advance_ms: int = 0  # a clock step instead of a heartbeat
    error: ErrorCode = ErrorCode.NONE
    answered_epoch: int | None = None
    assignment: set[int] | str | None = "any"  # "any": not checked
    state: str | None = None
    group_epoch: int | None = None
    members: set[str] | None = None


def owned(*partitions: int) -> dict[str, Any]:
    return {"owned": parts(*partitions)}


def three_members_stable() -> list[Step]:
    """a, b, c joined and reconciled: 2 partitions each, group epoch 3."""
    return [
        Step("a", 0, answered_epoch=1, assignment={0, 1, 2, 3, 4, 5}),
        Step("b", 0, answered_epoch=2, assignment=set()),
        Step("a", 1, answered_epoch=1, assignment={0, 1, 2}),  # must first give up 3, 4, 5
        Step("a", 1, owned(0, 1, 2), answered_epoch=2, assignment=NOT_SENT),
        Step("b", 2, answered_epoch=2, assignment={3, 4, 5}),
        Step("c", 0, answered_epoch=3, assignment=set()),
        Step("a", 2, answered_epoch=2, assignment={0, 1}),
        Step("b", 2, answered_epoch=2, assignment={3, 4}),
        Step("a", 2, owned(0, 1), answered_epoch=3),
        Step("b", 2, owned(3, 4), answered_epoch=3),
        Step("c", 3, answered_epoch=3, assignment={2, 5}, state="Stable", group_epoch=3),
    ]


CASES: dict[str, list[Step]] = {
    "first member joins: epoch 1, every partition, Stable": [
        Step("a", 0, answered_epoch=1, assignment={0, 1, 2, 3, 4, 5}, state="Stable", group_epoch=1),
    ],
    "unknown member heartbeats with an epoch": [
        Step("a", 0),
        Step("x", 3, error=ErrorCode.UNKNOWN_MEMBER_ID),
    ],
    "heartbeat with an epoch to a group that does not exist": [
        Step("a", 1, error=ErrorCode.GROUP_ID_NOT_FOUND),
    ],
    "a known member joins again (epoch 0): it holds nothing now, gets its share back": [
        Step("a", 0),
        Step("a", 0, answered_epoch=1, assignment={0, 1, 2, 3, 4, 5}, group_epoch=1),
    ],
    "epoch greater than the coordinator's is fenced": [
        Step("a", 0),
        Step("a", 5, error=ErrorCode.FENCED_MEMBER_EPOCH),
    ],
    "an older epoch that is not the previous one is fenced": [
        *three_members_stable(),
        Step("a", 1, owned(0, 1), error=ErrorCode.FENCED_MEMBER_EPOCH),
    ],
    "the previous epoch with owned partitions inside the assignment is accepted (answer lost)": [
        *three_members_stable(),
        Step("a", 2, owned(0, 1), answered_epoch=3),
    ],
    "the previous epoch owning more than the assignment is fenced": [
        *three_members_stable(),
        Step("a", 2, owned(0, 1, 2), error=ErrorCode.FENCED_MEMBER_EPOCH),
    ],
    "a subscription change bumps the group epoch": [
        Step("a", 0),
        Step("a", 1, {"subscribed_topic_names": ("t", "u")}, group_epoch=2, answered_epoch=2),
    ],
    "a heartbeat without changes keeps the group epoch and sends no assignment": [
        Step("a", 0),
        Step("a", 1, answered_epoch=1, assignment=NOT_SENT, group_epoch=1),
    ],
    "a full heartbeat (timeout, subscription and owned partitions) gets the assignment again": [
        Step("a", 0),
        Step(
            "a",
            1,
            {
                "rebalance_timeout_ms": REBALANCE_MS,
                "subscribed_topic_names": ("t",),
                **owned(0, 1, 2, 3, 4, 5),
            },
            assignment={0, 1, 2, 3, 4, 5},
        ),
    ],
    "a new member waits for partitions until their owner acknowledged the revocation": [
        Step("a", 0),
        Step("b", 0, answered_epoch=2, assignment=set(), state="Reconciling"),
        Step("b", 2, assignment=NOT_SENT),  # still held by a
        Step("a", 1, answered_epoch=1, assignment={0, 1, 2}),  # revoke 3, 4, 5; epoch kept
        Step("b", 2, assignment=NOT_SENT),  # a has not acknowledged yet
        Step("a", 1, owned(0, 1, 2, 3, 4, 5), answered_epoch=1),  # still holds them: no move
        Step("a", 1, owned(0, 1, 2), answered_epoch=2),  # acknowledged
        Step("b", 2, answered_epoch=2, assignment={3, 4, 5}, state="Stable"),
    ],
    "a member leaves (epoch -1): removed, the group epoch moves, others take over": [
        *three_members_stable(),
        Step("a", -1, answered_epoch=-1, members={"b", "c"}, group_epoch=4, state="Assigning"),
        Step("b", 3, answered_epoch=4, assignment={0, 3, 4}),
        Step("c", 3, answered_epoch=4, assignment={1, 2, 5}, state="Stable"),
    ],
    "leaving with an unknown member id": [
        Step("a", 0),
        Step("x", -1, error=ErrorCode.UNKNOWN_MEMBER_ID),
    ],
    "session expiry removes the member": [
        Step("a", 0),
        Step("b", 0),
        Step(advance_ms=SESSION_MS - 1, members={"a", "b"}),
        Step("a", 1, owned(0, 1, 2, 3, 4, 5)),
        Step(advance_ms=1, members={"a"}, group_epoch=3),
    ],
    "a member that does not revoke within its rebalance timeout is removed": [
        Step("a", 0, {"rebalance_timeout_ms": 2000}),
        Step("b", 0),
        Step("a", 1, assignment={0, 1, 2}),  # told to revoke 3, 4, 5
        Step("b", 2),
        Step(advance_ms=1999, members={"a", "b"}),
        Step("b", 2),
        Step(advance_ms=1, members={"b"}),
        Step("b", 2, answered_epoch=3, assignment={0, 1, 2, 3, 4, 5}),
    ],
    "a static member leaves for a while (-2): it keeps its partitions at epoch -2": [
        Step("a", 0, {"instance_id": "i-a"}),
        Step("a", -2, {"instance_id": "i-a"}, answered_epoch=-2, members={"a"}, group_epoch=1),
    ],
    "a static member returns under a new id: same partitions, no new group epoch": [
        Step("a", 0, {"instance_id": "i-a"}),
        Step("b", 0),
        Step("a", 1, {"instance_id": "i-a"}, assignment={0, 1, 2}),
        Step("a", 1, {"instance_id": "i-a", **owned(0, 1, 2)}, answered_epoch=2),
        Step("a", -2, {"instance_id": "i-a"}),
        Step("a2", 0, {"instance_id": "i-a"}, answered_epoch=2, assignment={0, 1, 2}, group_epoch=2),
        Step(members={"a2", "b"}),
    ],
    "a static member is not released: another id with its instance id is refused": [
        Step("a", 0, {"instance_id": "i-a"}),
        Step("a2", 0, {"instance_id": "i-a"}, error=ErrorCode.UNRELEASED_INSTANCE_ID),
    ],
    "a heartbeat for a static member from another member id is fenced": [
        Step("a", 0, {"instance_id": "i-a"}),
        Step("z", 1, {"instance_id": "i-a"}, error=ErrorCode.FENCED_INSTANCE_ID),
    ],
    "a heartbeat naming an unknown instance id": [
        Step("a", 0),
        Step("a", 1, {"instance_id": "nobody"}, error=ErrorCode.UNKNOWN_MEMBER_ID),
    ],
    "a static member away (-2) is removed when its session expires": [
        Step("a", 0, {"instance_id": "i-a"}),
        Step("b", 0),
        Step("a", -2, {"instance_id": "i-a"}),
        Step(advance_ms=SESSION_MS // 2),
        Step("b"),
        Step(advance_ms=SESSION_MS // 2, members={"b"}),
    ],
    "the group is full": [
        Step("a", 0, {}),
        Step("b", 0, error=ErrorCode.GROUP_MAX_SIZE_REACHED),
    ],
}
CONFIG = {"the group is full": {"max_size": 1}}


def run(driver: Driver, steps: list[Step]) -> None:
    for number, step in enumerate(steps):
        where = f"step {number}: {step}"
        if step.advance_ms:
            driver.advance(step.advance_ms)
        elif step.member:
            epoch = driver.epoch_of(step.member) if step.epoch is None else step.epoch
            answer = driver.beat(step.member, epoch, **step.fields)
            assert answer.error == step.error, f"{where}: {answer}"
            if step.answered_epoch is not None:
                assert answer.member_epoch == step.answered_epoch, f"{where}: {answer}"
            if step.assignment != "any":
                got = None if answer.assignment is None else set(answer.assignment.get(TOPIC.topic_id, ()))
                assert got == step.assignment, f"{where}: {answer}"
        if step.state is not None:
            assert driver.group.state.value == step.state, where
        if step.group_epoch is not None:
            assert driver.group.group_epoch == step.group_epoch, where
        if step.members is not None:
            assert set(driver.group.members) == step.members, where


@pytest.mark.parametrize("name", list(CASES))
def test_transition(name: str) -> None:
    run(Driver(**CONFIG.get(name, {"session_timeout_ms": SESSION_MS})), CASES[name])
