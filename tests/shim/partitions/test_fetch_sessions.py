"""The incremental fetch session cache (KIP-227), table-driven and clock-free: contexts by
session id and epoch, the partitions an incremental answer includes, Kafka's eviction."""

from __future__ import annotations

import random
import uuid
from dataclasses import dataclass

import pytest

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.shim.partitions.fetch_sessions import (
    EVICTION_MS,
    FINAL_EPOCH,
    INITIAL_EPOCH,
    INVALID_SESSION_ID,
    CachedPartition,
    FetchSessionCache,
    Full,
    Incremental,
    PartitionKey,
    Served,
    SessionError,
    Sessionless,
    Wanted,
    next_epoch,
)

NOW = 1_700_000_000_000
WANT = Wanted(0, 1 << 20, "t")


def served(hw: int = 10, start: int = 0, records: bool = False, error: int = 0) -> Served:
    return Served(error, hw, start, records)


def cache(slots: int = 10) -> FetchSessionCache:
    return FetchSessionCache(slots, ids=random.Random(7))


def open_session(
    c: FetchSessionCache, keys: list[PartitionKey], now: int = NOW, uses_topic_ids: bool = False
) -> int:
    context = c.new_context(
        session_id=0,
        epoch=INITIAL_EPOCH,
        uses_topic_ids=uses_topic_ids,
        wanted=dict.fromkeys(keys, WANT),
        forgotten=[],
        privileged=False,
        now=now,
    )
    assert isinstance(context, Full)
    return context.answer({key: served() for key in keys}, now).session_id


def incremental(
    c: FetchSessionCache,
    session_id: int,
    epoch: int,
    wanted: dict[PartitionKey, Wanted] | None = None,
    forgotten: tuple[PartitionKey, ...] = (),
    uses_topic_ids: bool = False,
) -> object:
    return c.new_context(
        session_id=session_id,
        epoch=epoch,
        uses_topic_ids=uses_topic_ids,
        wanted=wanted or {},
        forgotten=forgotten,
        privileged=False,
        now=NOW + 1,
    )


@pytest.mark.parametrize(
    ("epoch", "after"), [(FINAL_EPOCH, FINAL_EPOCH), (INITIAL_EPOCH, 1), (5, 6), (2**31 - 1, 1)]
)
def test_next_epoch(epoch: int, after: int) -> None:
    assert next_epoch(epoch) == after


# (does a session exist, session id sent (None: the open session's), epoch, v13+) -> context
CONTEXTS = [
    (False, 0, FINAL_EPOCH, False, Sessionless),
    (False, 0, INITIAL_EPOCH, False, Full),
    (False, 0, 1, False, ErrorCode.FETCH_SESSION_ID_NOT_FOUND),
    (False, 42, 1, False, ErrorCode.FETCH_SESSION_ID_NOT_FOUND),
    (False, 42, -7, False, ErrorCode.FETCH_SESSION_ID_NOT_FOUND),
    (True, None, 1, False, Incremental),
    (True, None, 2, False, ErrorCode.INVALID_FETCH_SESSION_EPOCH),
    (True, None, 1, True, ErrorCode.FETCH_SESSION_TOPIC_ID_ERROR),
    (True, None, INITIAL_EPOCH, False, Full),
    (True, None, FINAL_EPOCH, False, Sessionless),
]


@pytest.mark.parametrize(("exists", "sent", "epoch", "uses_topic_ids", "expected"), CONTEXTS)
def test_context_by_session_id_and_epoch(
    exists: bool, sent: int | None, epoch: int, uses_topic_ids: bool, expected: object
) -> None:
    c = cache()
    session_id = open_session(c, [("t", 0)]) if exists else 0
    context = incremental(c, session_id if sent is None else sent, epoch, uses_topic_ids=uses_topic_ids)
    if isinstance(expected, ErrorCode):
        assert context == SessionError(expected)
    else:
        assert isinstance(context, expected)  # type: ignore[arg-type]
    if exists and epoch in (INITIAL_EPOCH, FINAL_EPOCH):
        assert session_id not in c.sessions  # a full fetch closes the session it names


def test_session_ids_are_positive_and_epochs_advance() -> None:
    c = cache()
    session_id = open_session(c, [("t", 0)])
    assert 0 < session_id < 2**31 and c.sessions[session_id].epoch == 1
    for epoch in (1, 2, 3):
        context = incremental(c, session_id, epoch)
        assert isinstance(context, Incremental) and c.sessions[session_id].epoch == epoch + 1


# cached (hw, log start) = (10, 0); what is served -> included?
CHANGES = [
    ("nothing new", served(), False),
    ("records", served(records=True), True),
    ("high watermark", served(hw=11), True),
    ("log start offset", served(start=3), True),
    ("error", served(hw=-1, start=-1, error=ErrorCode.UNKNOWN_TOPIC_OR_PARTITION), True),
]


@pytest.mark.parametrize(("change", "answer", "included"), CHANGES)
def test_an_incremental_answer_includes_only_changes(change: str, answer: Served, included: bool) -> None:
    cached = CachedPartition(WANT, 10, 0)
    assert cached.must_respond(answer) is included
    assert cached.must_respond(answer) is (answer.has_records or answer.error_code != 0)  # remembered


def test_a_partition_is_sent_again_once_its_error_is_gone() -> None:
    cached = CachedPartition(WANT, 10, 0)
    assert cached.must_respond(served(error=ErrorCode.OFFSET_OUT_OF_RANGE))
    assert cached.high_watermark == -1
    assert cached.must_respond(served())  # same offsets as before the error: sent again


def test_incremental_answer_moves_partitions_with_records_to_the_end() -> None:
    c = cache()
    keys: list[PartitionKey] = [("t", 0), ("t", 1), ("t", 2)]
    session_id = open_session(c, keys)
    context = incremental(c, session_id, 1)
    assert isinstance(context, Incremental)
    answer = context.answer(
        {("t", 0): served(records=True), ("t", 1): served(), ("t", 2): served(hw=12)}, NOW
    )
    assert (answer.error, answer.session_id, answer.partitions) == (
        ErrorCode.NONE,
        session_id,
        [("t", 0), ("t", 2)],
    )
    assert list(c.sessions[session_id].partitions) == [("t", 1), ("t", 2), ("t", 0)]


def test_a_duplicate_request_answers_invalid_epoch_with_the_session_id() -> None:
    c = cache()
    session_id = open_session(c, [("t", 0)])
    first = incremental(c, session_id, 1)
    assert isinstance(first, Incremental)
    assert isinstance(incremental(c, session_id, 2), Incremental)  # answered while the first waits
    answer = first.answer({("t", 0): served(records=True)}, NOW)
    assert (answer.error, answer.session_id, answer.partitions) == (
        ErrorCode.INVALID_FETCH_SESSION_EPOCH,
        session_id,
        [],
    )


def test_requests_add_update_and_forget_partitions() -> None:
    c = cache()
    session_id = open_session(c, [("t", 0), ("t", 1)])
    moved = Wanted(5, 100, "t")
    context = incremental(c, session_id, 1, {("t", 1): moved, ("u", 0): WANT}, forgotten=(("t", 0),))
    assert isinstance(context, Incremental)
    assert context.wanted == {("t", 1): moved, ("u", 0): WANT}
    forget_all = incremental(c, session_id, 2, forgotten=(("t", 1), ("u", 0)))
    assert isinstance(forget_all, Sessionless) and session_id not in c.sessions


def test_a_session_keeps_the_topic_name_it_first_knew() -> None:
    c = cache()
    topic_id = uuid.uuid4()
    session_id = open_session(c, [(topic_id, 0)], uses_topic_ids=True)
    # The topic is gone: the request's lookup of its id found no name.
    context = incremental(c, session_id, 1, {(topic_id, 0): Wanted(3, 100, None)}, uses_topic_ids=True)
    assert isinstance(context, Incremental)
    assert context.wanted == {(topic_id, 0): Wanted(3, 100, "t")}


def test_topic_id_sessions_key_partitions_by_id() -> None:
    c = cache()
    topic_id = uuid.uuid4()
    session_id = open_session(c, [(topic_id, 0)], uses_topic_ids=True)
    context = incremental(c, session_id, 1, forgotten=((topic_id, 0),), uses_topic_ids=True)
    assert isinstance(context, Sessionless)
    assert incremental(c, session_id, 2, uses_topic_ids=True) == SessionError(
        ErrorCode.FETCH_SESSION_ID_NOT_FOUND
    )


@dataclass(frozen=True)
class Existing:
    privileged: bool
    size: int
    created_ms: int  # before now
    last_used_ms: int  # before now


OLD = EVICTION_MS + 1_000  # old enough, at its last use 10 ms ago, to be evictable
YOUNG = 1_000

# The full cache, the newcomer (privileged, size) -> which existing session is evicted
# (index), or None (no room: session id 0).
EVICTIONS = [
    ("young sessions stay", [Existing(False, 5, YOUNG, YOUNG)], (False, 50), None),
    (
        "a stale session goes first",
        [Existing(False, 50, OLD, 10), Existing(False, 1, OLD, OLD)],
        (False, 1),
        1,
    ),
    ("an old smaller one goes", [Existing(False, 5, OLD, 10), Existing(False, 3, OLD, 10)], (False, 4), 1),
    ("an old larger one stays", [Existing(False, 5, OLD, 10)], (False, 4), None),
    ("equal size: the new one loses", [Existing(False, 5, OLD, 10)], (False, 5), None),
    ("a privileged one evicts a young consumer", [Existing(False, 50, YOUNG, 10)], (True, 1), 0),
    ("a privileged one spares a young privileged", [Existing(True, 1, YOUNG, 10)], (True, 50), None),
    (
        "unprivileged go before privileged",
        [Existing(True, 1, OLD, 10), Existing(False, 40, OLD, 10)],
        (True, 2),
        1,
    ),
    ("a consumer never evicts a privileged one", [Existing(True, 1, YOUNG, 10)], (False, 50), None),
]


@pytest.mark.parametrize(
    ("case", "existing", "newcomer", "evicted"), EVICTIONS, ids=[e[0] for e in EVICTIONS]
)
def test_eviction_when_full(
    case: str, existing: list[Existing], newcomer: tuple[bool, int], evicted: int | None
) -> None:
    c = cache(slots=len(existing))
    ids = []
    for e in existing:
        # Created then last used at the given ages; the evictable sets are decided at that use.
        session_id = c.maybe_create(NOW - e.created_ms, e.privileged, False, {})
        session = c.sessions[session_id]
        session.partitions = {("t", i): CachedPartition(WANT) for i in range(e.size)}
        c._touch(session, NOW - e.last_used_ms)
        ids.append(session_id)
    privileged, size = newcomer
    partitions: dict[PartitionKey, CachedPartition] = {("n", i): CachedPartition(WANT) for i in range(size)}
    created = c.maybe_create(NOW, privileged, False, partitions)
    if evicted is None:
        assert created == INVALID_SESSION_ID and set(c.sessions) == set(ids)
    else:
        assert created != INVALID_SESSION_ID
        assert set(c.sessions) == (set(ids) - {ids[evicted]}) | {created}


def test_zero_slots_disable_sessions() -> None:
    c = cache(slots=0)
    assert open_session(c, [("t", 0)]) == INVALID_SESSION_ID and not c.sessions
