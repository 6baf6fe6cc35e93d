"""protocol.named: what a request names, read from its declaration's marks, on requests encoded
and decoded at the versions clients send."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from kafka_shim.protocol.messages import APIS_BY_MODULE
from kafka_shim.protocol.named import Named, named
from kafka_shim.protocol.schema import Field, Names

KNOWN_ID = uuid.UUID(int=7)
UNKNOWN_ID = uuid.UUID(int=8)


def topic_name(topic_id: uuid.UUID) -> str | None:
    return "by-id" if topic_id == KNOWN_ID else None


def decoded_named(module: str, version: int, body: dict[str, Any]) -> Named:
    """What the request names once built and parsed as the broker receives it."""
    message = APIS_BY_MODULE[module].request
    parsed = message.parse(message.build(body, version), version)
    return named(message, version, parsed, topic_name)


CASES = [
    (
        "offset_commit",
        8,
        {"group_id": "g", "topics": [{"name": "orders", "partitions": [{"partition_index": 1}]}]},
        Named(groups={"g"}, partitions={"orders": {1}}),
    ),
    (
        "produce",
        9,
        {"transactional_id": "tx", "topic_data": [{"name": "orders", "partition_data": [{"index": 2}]}]},
        Named(transactional_ids={"tx"}, partitions={"orders": {2}}),
    ),
    (  # by topic id, forgotten topics named too; an unknown id names nothing
        "fetch",
        13,
        {
            "topics": [
                {"topic_id": KNOWN_ID, "partitions": [{"partition": 3}]},
                {"topic_id": UNKNOWN_ID, "partitions": [{"partition": 4}]},
            ],
            "forgotten_topics_data": [{"topic_id": KNOWN_ID, "partitions": [5]}],
        },
        Named(partitions={"by-id": {3, 5}}),
    ),
    (  # v8 batches groups, each with its topics
        "offset_fetch",
        8,
        {"groups": [{"group_id": "g1", "topics": [{"name": "t", "partition_indexes": [0, 1]}]}]},
        Named(groups={"g1"}, partitions={"t": {0, 1}}),
    ),
    (  # v4 batches transactions, each with its topics
        "add_partitions_to_txn",
        4,
        {"transactions": [{"transactional_id": "tx", "topics": [{"name": "t", "partitions": [2]}]}]},
        Named(transactional_ids={"tx"}, partitions={"t": {2}}),
    ),
    ("find_coordinator", 4, {"key_type": 1, "coordinator_keys": ["tx"]}, Named(transactional_ids={"tx"})),
    ("find_coordinator", 0, {"key": "g"}, Named(groups={"g"})),
    ("delete_topics", 5, {"topic_names": ["a", "b"]}, Named(partitions={"a": set(), "b": set()})),
    (  # a topic named by id alone (name null)
        "metadata",
        12,
        {"topics": [{"topic_id": KNOWN_ID, "name": None}]},
        Named(partitions={"by-id": set()}),
    ),
    ("metadata", 12, {"topics": None}, Named()),
    (
        "consumer_group_heartbeat",
        0,
        {"group_id": "g", "subscribed_topic_names": ["t"], "topic_partitions": None},
        Named(groups={"g"}, partitions={"t": set()}),
    ),
    ("describe_groups", 5, {"groups": ["g1", "g2"]}, Named(groups={"g1", "g2"})),
    (  # a config resource names a topic or a group as its type says; a broker's neither
        "describe_configs",
        4,
        {
            "resources": [
                {"resource_type": 2, "resource_name": "t"},
                {"resource_type": 32, "resource_name": "g"},
                {"resource_type": 4, "resource_name": "1"},
            ]
        },
        Named(groups={"g"}, partitions={"t": set()}),
    ),
    (
        "join_group",
        5,
        {"group_id": "g", "protocols": [{"name": "range", "metadata": b""}]},
        Named(groups={"g"}),
    ),
]


@pytest.mark.parametrize(("module", "version", "body", "expected"), CASES)
def test_what_a_request_names(module: str, version: int, body: dict[str, Any], expected: Named) -> None:
    assert decoded_named(module, version, body) == expected


def test_a_field_outside_the_version_names_nothing() -> None:
    # OffsetFetch's top-level group_id exists up to v7; at v8 its default ("") is not a group.
    assert decoded_named("offset_fetch", 8, {"groups": []}) == Named()


# Request fields whose names say they name something, and what: a new API's field by one of
# these names must declare it (a field by another name is found by review, as any declaration).
NAMING_FIELDS = {
    "group_id": Names.GROUP,
    "group_ids": Names.GROUP,
    "groups_names": Names.GROUP,
    "transactional_id": Names.TRANSACTIONAL_ID,
    "transactional_ids": Names.TRANSACTIONAL_ID,
    "topic": Names.TOPIC,
    "topic_name": Names.TOPIC,
    "topic_id": Names.TOPIC,
    "topic_names": Names.TOPIC,
}


def _fields(fields: list[Field], path: str) -> list[tuple[str, Field]]:
    found = []
    for f in fields:
        found.append((f"{path}.{f.name}", f))
        found.extend(_fields(f.inner_fields(), f"{path}.{f.name}"))
    return found


def test_every_request_field_named_for_a_topic_group_or_transaction_declares_it() -> None:
    undeclared = [
        path
        for module, api in APIS_BY_MODULE.items()
        for path, f in _fields(api.request.fields, api.name)
        if f.name in NAMING_FIELDS and f.names is not NAMING_FIELDS[f.name]
    ]
    assert undeclared == []
