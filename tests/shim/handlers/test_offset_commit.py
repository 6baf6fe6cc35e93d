"""OffsetCommit names partitions that do not exist: Kafka (KafkaApis.handleOffsetCommitRequest)
answers each UNKNOWN_TOPIC_OR_PARTITION before the group coordinator sees the request, and
still commits the partitions that exist, for group members and standalone commits alike."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.protocol.messages.offset_commit import API
from kafka_shim.shim.coordinator.types import TopicPartition
from kafka_shim.shim.handlers import offset_fetch
from tests.helpers import Harness, subscription

UNKNOWN = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION

# (committed partitions, expected error per partition): "orders" exists with 2 partitions.
CASES = [
    ([("orders", 0), ("orders", 1)], [0, 0]),
    ([("missing", 0)], [UNKNOWN]),
    ([("orders", 0), ("orders", 2)], [0, UNKNOWN]),
    ([("orders", 1), ("missing", 0), ("missing", 3)], [0, UNKNOWN, UNKNOWN]),
]


MISSING_ID = uuid.UUID(int=7)  # no topic has it


def topic_ids(h: Harness) -> dict[str, uuid.UUID]:
    """v10 names topics by id: "missing" by an id no topic has."""
    orders = h.broker.topics.get("orders")
    assert orders is not None
    return {"orders": orders.topic_id, "missing": MISSING_ID}


def body(
    partitions: list[tuple[str, int]],
    generation: int = -1,
    member_id: str = "",
    ids: dict[str, uuid.UUID] | None = None,
) -> dict[str, Any]:
    topics: dict[str, list[dict[str, Any]]] = {}
    for topic, index in partitions:
        topics.setdefault(topic, []).append({"partition_index": index, "committed_offset": 7})
    return {
        "group_id": "g",
        "generation_id_or_member_epoch": generation,
        "member_id": member_id,
        "topics": [
            {"name": name, "topic_id": (ids or {}).get(name, uuid.UUID(int=0)), "partitions": parts}
            for name, parts in topics.items()
        ],
    }


def answered(response: Any, ids: dict[str, uuid.UUID] | None = None) -> dict[tuple[str, int], int]:
    names = {topic_id: name for name, topic_id in (ids or {}).items()}
    return {
        (names.get(t.topic_id, t.name), p.partition_index): p.error_code
        for t in response.topics
        for p in t.partitions
    }


def committed(h: Harness) -> dict[tuple[str, int], int]:
    return {(tp.topic, tp.partition): o.offset for tp, o in h.broker.groups.fetch_offsets("g", None).items()}


@pytest.fixture
def h() -> Harness:
    harness = Harness()
    harness.broker.topics.create("orders", 2)
    return harness


@pytest.mark.parametrize("version", range(API.versions.low, API.versions.high + 1))
@pytest.mark.parametrize(("partitions", "errors"), CASES)
def test_standalone_commit_answers_unknown_partitions_and_commits_the_rest(
    h: Harness, version: int, partitions: list[tuple[str, int]], errors: list[int]
) -> None:
    ids = topic_ids(h) if version >= 10 else None
    if ids is not None:  # v10: an id the broker does not know (KafkaApis.handleOffsetCommitRequest)
        errors = [
            ErrorCode.UNKNOWN_TOPIC_ID if tp[0] == "missing" else e
            for tp, e in zip(partitions, errors, strict=True)
        ]
    response = h.call(API.key, version, body(partitions, ids=ids))
    assert answered(response, ids) == dict(zip(partitions, errors, strict=True))
    assert committed(h) == {tp: 7 for tp, error in zip(partitions, errors, strict=True) if error == 0}


@pytest.mark.parametrize(("partitions", "errors"), CASES)
def test_member_commit_answers_unknown_partitions_and_commits_the_rest(
    h: Harness, partitions: list[tuple[str, int]], errors: list[int]
) -> None:
    join = {
        "group_id": "g",
        "session_timeout_ms": 10_000,
        "rebalance_timeout_ms": 10_000,
        "member_id": "",
        "protocol_type": "consumer",
        "protocols": [{"name": "range", "metadata": subscription("orders")}],
    }
    joined = h.call(11, 3, join)
    sync = {"group_id": "g", "generation_id": joined.generation_id, "member_id": joined.member_id}
    h.call(14, 3, {**sync, "assignments": [{"member_id": joined.member_id, "assignment": b""}]})
    response = h.call(API.key, 8, body(partitions, joined.generation_id, joined.member_id))
    assert answered(response) == dict(zip(partitions, errors, strict=True))
    assert committed(h) == {tp: 7 for tp, error in zip(partitions, errors, strict=True) if error == 0}


def test_a_request_naming_only_unknown_partitions_never_reaches_the_coordinator(h: Harness) -> None:
    # A standalone commit would create the group in the coordinator; none may appear.
    h.call(API.key, 8, body([("missing", 0)]))
    assert h.broker.groups.group("g") is None
    assert TopicPartition("missing", 0) not in h.broker.groups.fetch_offsets("g", None)


def test_v10_commits_and_fetches_by_topic_id(h: Harness) -> None:
    """OffsetCommit and OffsetFetch v10 (Kafka 4.2) name topics by id: the answers carry the
    ids; an unknown id is UNKNOWN_TOPIC_ID with no offset; "every partition" lists ids."""
    ids = topic_ids(h)
    response = h.call(API.key, 10, body([("orders", 0), ("orders", 1)], ids=ids))
    assert [t.topic_id for t in response.topics] == [ids["orders"]]
    wanted = [{"topic_id": ids[name], "partition_indexes": [0]} for name in ("orders", "missing")]
    group = {"group_id": "g", "member_id": None, "member_epoch": -1}
    fetched = h.call(offset_fetch, 10, {"groups": [{**group, "topics": wanted}], "require_stable": False})
    [answer] = fetched.groups
    assert [
        (t.topic_id, [(p.partition_index, p.committed_offset, p.error_code) for p in t.partitions])
        for t in answer.topics
    ] == [(ids["orders"], [(0, 7, 0)]), (MISSING_ID, [(0, -1, ErrorCode.UNKNOWN_TOPIC_ID)])]
    everything = h.call(offset_fetch, 10, {"groups": [{**group, "topics": None}], "require_stable": False})
    assert [(t.topic_id, len(t.partitions)) for t in everything.groups[0].topics] == [(ids["orders"], 2)]
