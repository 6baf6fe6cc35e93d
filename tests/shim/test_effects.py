"""The one writer of coordinators' records (shim/effects.py): records first, then deadlines,
replies and markers; a failed append puts the coordinator back and answers its error."""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Any

import pytest

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.shim.coordinator.outcome import Outcome, TransactionMarkers
from kafka_shim.shim.coordinator.types import TopicPartition
from kafka_shim.shim.effects import EffectWriter, coordinator_error
from kafka_shim.storage.errors import StorageError
from tests.helpers import FakeClock

MARKERS = TransactionMarkers("tx", 7, 1, True, frozenset({TopicPartition("t", 0)}))


class RecordingLog:
    """An internal topic that keeps what is appended, or refuses with `failing`."""

    name = "__test_state"

    def __init__(self, steps: list[str]) -> None:
        self.steps = steps
        self.records: list[Any] = []
        self.failing: Exception | None = None

    def append(self, records: Sequence[Any], now_ms: int) -> None:
        if self.failing is not None:
            raise self.failing
        self.steps.append(f"append {list(records)} at {now_ms}")
        self.records.extend(records)


def writer(steps: list[str], clock: FakeClock) -> tuple[EffectWriter, RecordingLog]:
    log = RecordingLog(steps)
    effects = EffectWriter(log, clock, markers=lambda m: steps.append(f"markers {m.transactional_id}"))
    return effects, log


def test_records_are_appended_before_deadlines_and_markers() -> None:
    steps: list[str] = []
    clock = FakeClock()
    effects, _ = writer(steps, clock)
    answer = effects.apply(Outcome("answer", ("r1", "r2"), (("k", clock.now + 5),), markers=(MARKERS,)))
    assert answer == "answer"
    assert steps == [f"append ['r1', 'r2'] at {clock.now}", "markers tx"]
    assert effects.deadlines.earliest() == clock.now + 5


@pytest.mark.parametrize(
    ("stored", "answered"),
    [
        (ErrorCode.KAFKA_STORAGE_ERROR, ErrorCode.NOT_COORDINATOR),
        (ErrorCode.NOT_LEADER_OR_FOLLOWER, ErrorCode.NOT_COORDINATOR),
        (ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, ErrorCode.COORDINATOR_NOT_AVAILABLE),
        (ErrorCode.NOT_ENOUGH_REPLICAS, ErrorCode.COORDINATOR_NOT_AVAILABLE),
        (ErrorCode.MESSAGE_TOO_LARGE, ErrorCode.UNKNOWN_SERVER_ERROR),
        (ErrorCode.RECORD_LIST_TOO_LARGE, ErrorCode.UNKNOWN_SERVER_ERROR),
    ],
)
def test_a_failed_append_is_undone_and_answered_the_coordinators_error(
    stored: ErrorCode, answered: ErrorCode
) -> None:
    steps: list[str] = []
    clock = FakeClock()
    effects, log = writer(steps, clock)
    log.failing = StorageError(stored, "disk full")
    undone: list[bool] = []
    outcome = Outcome(
        "answer", ("r",), (("k", clock.now),), undo=lambda: undone.append(True), markers=(MARKERS,)
    )
    with pytest.raises(StorageError) as raised:
        effects.apply(outcome)
    assert raised.value.code == answered == coordinator_error(stored)
    assert undone == [True]
    # Nothing else of the outcome was carried out: no deadline, no markers.
    assert effects.deadlines.earliest() is None and steps == []
    assert effects.apply_or(outcome, lambda code: f"refused {code.name}") == f"refused {answered.name}"


def test_a_record_that_cannot_be_encoded_is_undone_and_raised_as_it_is() -> None:
    effects, log = writer([], FakeClock())
    log.failing = ValueError("timestamp out of range")
    undone: list[bool] = []
    with pytest.raises(ValueError, match="timestamp"):
        effects.apply(Outcome(None, ("r",), undo=lambda: undone.append(True)))
    assert undone == [True]


def test_an_outcome_without_records_writes_nothing() -> None:
    steps: list[str] = []
    effects, log = writer(steps, FakeClock())
    log.failing = StorageError(ErrorCode.KAFKA_STORAGE_ERROR, "never asked")
    assert effects.apply(Outcome(ErrorCode.NONE, (), (("k", 1),))) == ErrorCode.NONE
    assert effects.deadlines.earliest() == 1


def test_deadlines_may_be_kept_by_another_writer() -> None:
    kept: list[tuple[Hashable, int | None]] = []
    effects = EffectWriter(RecordingLog([]), FakeClock(), set_deadline=lambda k, at: kept.append((k, at)))
    effects.apply(Outcome(None, ("r",), (("lock", 10), ("old", None))))
    assert kept == [("lock", 10), ("old", None)] and effects.deadlines.earliest() is None


def test_a_deadline_whose_records_fail_fires_again_after_the_backoff_and_the_others_go_on() -> None:
    clock = FakeClock()
    effects, log = writer([], clock)
    effects.set_deadline("bad", clock.now)
    effects.set_deadline("good", clock.now)
    fired: list[Hashable] = []

    def fire(key: Hashable, now: int) -> None:
        fired.append(key)
        log.failing = StorageError(ErrorCode.KAFKA_STORAGE_ERROR, "full") if key == "bad" else None
        effects.apply(Outcome(None, (key,)))

    with pytest.raises(StorageError):
        effects.fire_due(clock.now, fire)
    assert fired == ["bad", "good"] and log.records == ["good"]
    assert effects.deadlines.at("bad") == clock.now + effects.retry_backoff_ms
