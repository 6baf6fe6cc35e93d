"""Share sessions: Kafka 4.2's ShareSessionCache (epochs, the session limit, connections
closing), table-driven. A step is (member, epoch or "end" or "close:<connection>", connection);
each answers the epoch the member's next request must carry, an error, or what ended."""

from __future__ import annotations

import uuid

import pytest

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.shim.coordinator.share.sessions import MAX_EPOCH, ShareSessions, next_epoch

NOT_FOUND = ErrorCode.SHARE_SESSION_NOT_FOUND
BAD_EPOCH = ErrorCode.INVALID_SHARE_SESSION_EPOCH
LIMIT = ErrorCode.SHARE_SESSION_LIMIT_REACHED

Step = tuple[str, object, str]


def run(steps: list[Step], max_sessions: int = 2000) -> list[object]:
    sessions = ShareSessions(max_sessions)
    got: list[object] = []
    for member, epoch, connection in steps:
        if epoch == "end":
            got.append(sessions.end("g", member))
        elif epoch == "close":
            got.append(sessions.disconnected(connection))
        else:
            assert isinstance(epoch, int)
            entered = sessions.enter("g", member, epoch, connection)
            got.append(entered if isinstance(entered, ErrorCode) else entered.epoch)
    return got


@pytest.mark.parametrize(
    ("steps", "answers"),
    [
        ([("m", 0, "c"), ("m", 1, "c"), ("m", 2, "c")], [1, 2, 3]),
        ([("m", 1, "c")], [NOT_FOUND]),
        ([("m", -1, "c")], [NOT_FOUND]),
        ([("m", 0, "c"), ("m", 2, "c")], [1, BAD_EPOCH]),
        ([("m", 0, "c"), ("m", 1, "c"), ("m", 0, "c"), ("m", 1, "c")], [1, 2, 1, 2]),  # 0 replaces
        # -1 is served at the session's epoch as it is; `end` then removes it.
        (
            [("m", 0, "c"), ("m", 1, "c"), ("m", -1, "c"), ("m", "end", ""), ("m", 2, "c")],
            [1, 2, 2, True, NOT_FOUND],
        ),
        # The broker's limit: a third member cannot open one; one ending frees a slot.
        (
            [("a", 0, "1"), ("b", 0, "2"), ("c", 0, "3"), ("a", "end", ""), ("c", 0, "3")],
            [1, 1, LIMIT, True, 1],
        ),
        # A member reopening its own session at the limit replaces it (not refused).
        ([("a", 0, "1"), ("b", 0, "2"), ("a", 1, "1"), ("a", 0, "1")], [1, 1, 2, 1]),
        # Its connection closing ends the session it opened; another connection's stays.
        (
            [("a", 0, "1"), ("b", 0, "2"), ("", "close", "1"), ("a", 1, "1"), ("b", 1, "2")],
            [1, 1, ("g", "a"), NOT_FOUND, 2],
        ),
        # A session already ended by its final epoch: the connection closing ends nothing.
        ([("a", 0, "1"), ("a", "end", ""), ("", "close", "1")], [1, True, None]),
    ],
)
def test_sessions(steps: list[Step], answers: list[object]) -> None:
    assert run(steps, max_sessions=2) == answers


def test_epochs_wrap_to_one_and_members_are_apart() -> None:
    assert next_epoch(MAX_EPOCH) == 1
    sessions = ShareSessions()
    sessions.enter("g", "a", 0)
    assert sessions.enter("g", "b", 1) == NOT_FOUND
    assert len(sessions) == 1


def test_partitions_are_added_and_forgotten() -> None:
    session = ShareSessions().enter("g", "m", 0)
    assert not isinstance(session, ErrorCode)
    topic = uuid.UUID(int=7)
    session.add([(topic, 0), (topic, 1)])
    session.add([(topic, 1), (topic, 2)])
    session.forget([(topic, 0)])
    assert session.partitions == [(topic, 1), (topic, 2)]
