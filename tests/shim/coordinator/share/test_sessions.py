"""Share sessions: Kafka's epochs, table-driven."""

from __future__ import annotations

import uuid

import pytest

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.shim.coordinator.share.sessions import MAX_EPOCH, ShareSessions, next_epoch


@pytest.mark.parametrize(
    ("epochs", "answers"),
    [
        ([0, 1, 2, 3], [1, 2, 3, 4]),  # the epoch each request leaves the session expecting
        ([1], [ErrorCode.SHARE_SESSION_NOT_FOUND]),
        ([-1], [ErrorCode.SHARE_SESSION_NOT_FOUND]),
        ([0, 2], [1, ErrorCode.INVALID_SHARE_SESSION_EPOCH]),
        ([0, 1, 0, 1], [1, 2, 1, 2]),  # epoch 0 replaces the member's session
        ([0, 1, -1, 2], [1, 2, 2, ErrorCode.SHARE_SESSION_NOT_FOUND]),  # -1 serves, then ends it
    ],
)
def test_epochs(epochs: list[int], answers: list[object]) -> None:
    sessions = ShareSessions()
    got: list[object] = []
    for epoch in epochs:
        entered = sessions.enter("g", "m", epoch)
        got.append(entered if isinstance(entered, ErrorCode) else entered.epoch)
    assert got == answers


def test_epochs_wrap_to_one_and_members_are_apart() -> None:
    assert next_epoch(MAX_EPOCH) == 1
    sessions = ShareSessions()
    sessions.enter("g", "a", 0)
    assert sessions.enter("g", "b", 1) == ErrorCode.SHARE_SESSION_NOT_FOUND
    sessions.drop_member("g", "a")
    assert sessions.enter("g", "a", 1) == ErrorCode.SHARE_SESSION_NOT_FOUND


def test_partitions_are_added_and_forgotten() -> None:
    session = ShareSessions().enter("g", "m", 0)
    assert not isinstance(session, ErrorCode)
    topic = uuid.UUID(int=7)
    session.add([(topic, 0), (topic, 1)])
    session.add([(topic, 1), (topic, 2)])
    session.forget([(topic, 0)])
    assert session.partitions == [(topic, 1), (topic, 2)]
