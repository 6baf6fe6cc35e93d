"""Fetch with incremental fetch sessions (KIP-227) through the wire schemas: a full fetch
opens a session, incremental fetches name only changes and are answered with only the
partitions that changed, also when a long poll is woken by new data."""

from __future__ import annotations

from typing import Any

import pytest

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.protocol.records import RecordBatches
from kafka_shim.shim.handlers import fetch
from tests.batches import make_batch, read_records
from tests.helpers import FakeRequestContext, Harness

# (topic, partition, fetch offset): what a request names
Part = tuple[str, int, int]
SESSION_VERSIONS = [7, 12, 13, 16]


def harness(**config: Any) -> Harness:
    h = Harness(**config)
    h.broker.topics.create("t", 3)
    h.broker.topics.create("u", 1)
    return h


def append(h: Harness, topic: str, partition: int, *values: bytes) -> None:
    log = h.broker.topics.partition(topic, partition)
    assert log is not None
    log.append(RecordBatches.parse(make_batch(list(values))))


def request(
    h: Harness,
    version: int,
    session_id: int,
    epoch: int,
    parts: list[Part],
    forgotten: list[tuple[str, int]] = (),  # type: ignore[assignment]
    **overrides: Any,
) -> dict[str, Any]:
    def topic_field(name: str) -> dict[str, Any]:
        if version < 13:
            return {"topic": name}
        topic = h.broker.topics.get(name)
        assert topic is not None
        return {"topic_id": topic.topic_id}

    topics = [
        topic_field(name)
        | {
            "partitions": [
                {"partition": p, "fetch_offset": offset, "partition_max_bytes": 1 << 20}
                for t, p, offset in parts
                if t == name
            ]
        }
        for name in dict.fromkeys(t for t, _, _ in parts)
    ]
    forgotten_topics = [
        topic_field(name) | {"partitions": [p for t, p in forgotten if t == name]}
        for name in dict.fromkeys(t for t, _ in forgotten)
    ]
    base = {
        "max_wait_ms": 0,
        "min_bytes": 1,
        "max_bytes": 1 << 20,
        "session_id": session_id,
        "session_epoch": epoch,
        "topics": topics,
        "forgotten_topics_data": forgotten_topics,
    }
    return base | overrides


def call(h: Harness, version: int, body: dict[str, Any], ctx: FakeRequestContext | None = None) -> Any:
    response = h.call(fetch, version, body, ctx)
    assert response is not None
    return response


def answered(h: Harness, response: Any) -> dict[tuple[str, int], tuple[int, int, list[bytes | None]]]:
    """(topic name, partition) -> (error code, high watermark, values) of what was answered."""
    out = {}
    for topic in response.responses:
        name = topic.topic or _name(h, topic.topic_id)  # v13+: no names
        for p in topic.partitions:
            values = [v for _, _, v in read_records(p.records)] if p.records else []
            out[(name, p.partition_index)] = (p.error_code, p.high_watermark, values)
    return out


def _name(h: Harness, topic_id: Any) -> str:
    topic = h.broker.topics.get_by_id(topic_id)
    return topic.name if topic is not None else f"deleted:{topic_id}"


def open_session(h: Harness, version: int, parts: list[Part], **overrides: Any) -> tuple[int, Any]:
    response = call(h, version, request(h, version, 0, 0, parts, **overrides))
    assert response.error_code == ErrorCode.NONE
    return response.session_id, response


ALL_T: list[Part] = [("t", 0, 0), ("t", 1, 0), ("t", 2, 0)]


@pytest.mark.parametrize("version", SESSION_VERSIONS)
def test_a_session_answers_only_what_changed(version: int) -> None:
    h = harness()
    append(h, "t", 0, b"a")
    session_id, first = open_session(h, version, ALL_T)
    assert session_id != 0
    assert answered(h, first) == {
        ("t", 0): (ErrorCode.NONE, 1, [b"a"]),
        ("t", 1): (ErrorCode.NONE, 0, []),
        ("t", 2): (ErrorCode.NONE, 0, []),
    }
    # The client consumed "a": it names partition 0 at its new offset, and nothing changed.
    idle = call(h, version, request(h, version, session_id, 1, [("t", 0, 1)]))
    assert (idle.error_code, idle.session_id, idle.responses) == (ErrorCode.NONE, session_id, [])
    append(h, "t", 2, b"b")
    news = call(h, version, request(h, version, session_id, 2, []))
    assert answered(h, news) == {("t", 2): (ErrorCode.NONE, 1, [b"b"])}
    # Not consumed yet (the client did not move partition 2's offset): served again.
    again = call(h, version, request(h, version, session_id, 3, []))
    assert answered(h, again) == {("t", 2): (ErrorCode.NONE, 1, [b"b"])}
    assert call(h, version, request(h, version, session_id, 4, [("t", 2, 1)])).responses == []


def test_a_long_poll_answers_only_the_partition_that_got_data() -> None:
    h = harness()
    session_id, _ = open_session(h, 13, ALL_T)
    ctx = h.context(13)
    ctx.during_wait.append(lambda: append(h, "t", 1, b"late"))
    response = call(h, 13, request(h, 13, session_id, 1, [], max_wait_ms=5000), ctx)
    assert answered(h, response) == {("t", 1): (ErrorCode.NONE, 1, [b"late"])}
    assert ctx.waits == [5000]
    assert len(ctx.waited_on[0]) == 3  # the session's partitions, none named in the request


def test_an_idle_long_poll_times_out_with_nothing() -> None:
    h = harness()
    session_id, _ = open_session(h, 12, ALL_T)
    ctx = h.context(12)
    start = h.clock.now
    response = call(h, 12, request(h, 12, session_id, 1, [], max_wait_ms=500), ctx)
    assert (response.error_code, response.session_id, response.responses) == (ErrorCode.NONE, session_id, [])
    assert h.clock.now - start == 500


@pytest.mark.parametrize("version", [12, 13])
def test_added_and_forgotten_partitions(version: int) -> None:
    h = harness()
    session_id, _ = open_session(h, version, [("t", 0, 0)])
    added = call(h, version, request(h, version, session_id, 1, [("u", 0, 0)], forgotten=[("t", 0)]))
    assert answered(h, added) == {("u", 0): (ErrorCode.NONE, 0, [])}  # new: always answered
    append(h, "t", 0, b"forgotten")
    append(h, "u", 0, b"kept")
    response = call(h, version, request(h, version, session_id, 2, []))
    assert answered(h, response) == {("u", 0): (ErrorCode.NONE, 1, [b"kept"])}


def test_partitions_added_to_a_topic_later_join_the_session() -> None:
    h = harness()
    session_id, _ = open_session(h, 13, ALL_T)
    h.broker.topics.add_partitions("t", 4)
    append(h, "t", 3, b"new")
    response = call(h, 13, request(h, 13, session_id, 1, [("t", 3, 0)]))
    assert answered(h, response) == {("t", 3): (ErrorCode.NONE, 1, [b"new"])}


@pytest.mark.parametrize("version", [12, 13])
def test_a_topic_deleted_in_a_session_is_reported_at_once(version: int) -> None:
    h = harness()
    session_id, _ = open_session(h, version, [("t", 0, 0), ("u", 0, 0)])
    u_id = h.broker.topics.get("u").topic_id  # type: ignore[union-attr]
    h.broker.topics.delete("u")
    ctx = h.context(version)
    response = call(h, version, request(h, version, session_id, 1, [], max_wait_ms=5000), ctx)
    assert ctx.waits == []  # an error is answered without waiting
    # The session remembers the topic's name (v13+ too): unknown by name, not by id.
    key = ("u", 0) if version < 13 else (f"deleted:{u_id}", 0)
    assert answered(h, response) == {key: (ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, -1, [])}
    # Errors are repeated until the client forgets the partition.
    forgotten = request(h, version, session_id, 2, [])
    topic_field = {"topic": "u"} if version < 13 else {"topic_id": u_id}
    forgotten["forgotten_topics_data"] = [topic_field | {"partitions": [0]}]
    assert call(h, version, forgotten).responses == []


def test_a_topic_deleted_and_created_again_in_a_v13_session_is_inconsistent() -> None:
    h = harness()
    session_id, _ = open_session(h, 13, [("u", 0, 0)])
    old_id = h.broker.topics.get("u").topic_id  # type: ignore[union-attr]
    h.broker.topics.delete("u")
    h.broker.topics.create("u", 1)
    response = call(h, 13, request(h, 13, session_id, 1, []))
    assert answered(h, response) == {(f"deleted:{old_id}", 0): (ErrorCode.INCONSISTENT_TOPIC_ID, -1, [])}
    # A new full fetch names the new id: served.
    session_id, fresh = open_session(h, 13, [("u", 0, 0)])
    assert answered(h, fresh) == {("u", 0): (ErrorCode.NONE, 0, [])}


# (session opened at version, incremental sent: session id, epoch, version) -> top-level error
ERRORS = [
    ("unknown session", 12, (12345, 1, 12), ErrorCode.FETCH_SESSION_ID_NOT_FOUND),
    ("id 0 with an incremental epoch", 12, (0, 1, 12), ErrorCode.FETCH_SESSION_ID_NOT_FOUND),
    ("wrong epoch", 12, (None, 2, 12), ErrorCode.INVALID_FETCH_SESSION_EPOCH),
    ("names session, ids request", 12, (None, 1, 13), ErrorCode.FETCH_SESSION_TOPIC_ID_ERROR),
    ("ids session, names request", 13, (None, 1, 12), ErrorCode.FETCH_SESSION_TOPIC_ID_ERROR),
]


@pytest.mark.parametrize(("case", "opened", "sent", "error"), ERRORS, ids=[e[0] for e in ERRORS])
def test_session_errors(case: str, opened: int, sent: tuple[int | None, int, int], error: ErrorCode) -> None:
    h = harness()
    session_id, _ = open_session(h, opened, ALL_T)
    sent_id, epoch, version = sent
    response = call(h, version, request(h, version, session_id if sent_id is None else sent_id, epoch, []))
    assert (response.error_code, response.session_id, response.responses) == (error, 0, [])


def test_a_full_fetch_closes_the_session_it_names() -> None:
    h = harness()
    session_id, _ = open_session(h, 12, ALL_T)
    closed = call(h, 12, request(h, 12, session_id, -1, ALL_T))
    assert closed.session_id == 0 and len(answered(h, closed)) == 3
    again = call(h, 12, request(h, 12, session_id, 1, []))
    assert again.error_code == ErrorCode.FETCH_SESSION_ID_NOT_FOUND


def test_zero_cache_slots_disable_sessions() -> None:
    h = harness(max_incremental_fetch_session_cache_slots=0)
    session_id, response = open_session(h, 13, ALL_T)
    assert session_id == 0 and len(answered(h, response)) == 3


def test_read_committed_in_a_session_sees_the_commit() -> None:
    h = harness()
    log = h.broker.topics.partition("t", 0)
    assert log is not None
    log.append(
        RecordBatches.parse(
            make_batch([b"txn"], producer_id=7, producer_epoch=0, base_sequence=0, transactional=True)
        )
    )
    session_id, first = open_session(h, 12, [("t", 0, 0)], isolation_level=1)
    part = first.responses[0].partitions[0]
    assert (part.last_stable_offset, part.records) == (0, b"")  # held back by the open transaction
    idle = call(h, 12, request(h, 12, session_id, 1, [], isolation_level=1))
    assert idle.responses == []
    log.write_txn_marker(7, 0, True, 0, h.clock.now)
    committed = call(h, 12, request(h, 12, session_id, 2, [], isolation_level=1))
    part = committed.responses[0].partitions[0]
    assert (part.high_watermark, part.last_stable_offset, part.aborted_transactions) == (2, 2, [])
    records = read_records(part.records)  # the record, then the COMMIT marker's control record
    assert [offset for offset, _, _ in records] == [0, 1] and records[0][2] == b"txn"
