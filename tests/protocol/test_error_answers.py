"""protocol.error_answers: an error answer for every API and version, the error where Kafka puts it."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from kafka_shim.protocol.error_answers import NoErrorField, error_answer, has_error_field
from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.protocol.messages import APIS
from kafka_shim.protocol.schema import Array, Field, Struct

VERSIONS = [
    (api, version)
    for api in APIS.values()
    for version in range(api.versions.low, api.versions.high + 1)
    if has_error_field(api, version)
]


@pytest.mark.parametrize(("api", "version"), VERSIONS, ids=lambda v: getattr(v, "name", str(v)))
def test_every_api_and_version_builds_an_answer_that_parses_back_carrying_the_error(
    api: Any, version: int
) -> None:
    request = api.request.parse(api.request.build(_sample(api.request.fields, version), version), version)
    answer = error_answer(api, version, request, ErrorCode.NOT_COORDINATOR)
    parsed = api.response.parse(api.response.build(answer, version), version)
    assert ErrorCode.NOT_COORDINATOR in _errors(parsed).values()


def _sample(fields: list[Field], version: int) -> dict[str, Any]:
    """A request with one element in every array, so every mirrored array has one to answer."""
    sample: dict[str, Any] = {}
    for field in fields:
        kind = field.type
        if isinstance(kind, Array):
            element = kind.element
            sample[field.name] = [
                _sample(element.fields, version) if isinstance(element, Struct) else element.default
            ]
    return sample


def _errors(value: Any, path: str = "") -> dict[str, int]:
    """error_code values by where they are, for comparing with Kafka's placement."""
    found: dict[str, int] = {}
    if isinstance(value, dict):
        for key, each in value.items():
            if key == "error_code":
                found[path or "top"] = each
            else:
                found.update(_errors(each, f"{path}.{key}" if path else key))
    elif isinstance(value, list):
        for index, each in enumerate(value):
            found.update(_errors(each, f"{path}[{index}]"))
    return found


TOPIC_ID = uuid.UUID(int=7)
CASES = [
    (
        "Produce: per partition, offsets -1",
        0,
        9,
        {
            "acks": -1,
            "timeout_ms": 1000,
            "topic_data": [{"name": "t", "partition_data": [{"index": 2, "records": b""}]}],
        },
        False,
        {"responses[0].partition_responses[0]": 6},
        {
            "responses": [
                {
                    "name": "t",
                    "partition_responses": [{"index": 2, "base_offset": -1, "log_start_offset": -1}],
                }
            ]
        },
    ),
    (
        "OffsetCommit: per partition",
        8,
        8,
        {
            "group_id": "g",
            "topics": [{"name": "t", "partitions": [{"partition_index": 0, "committed_offset": 5}]}],
        },
        False,
        {"topics[0].partitions[0]": 6},
        {"topics": [{"name": "t", "partitions": [{"partition_index": 0}]}]},
    ),
    (
        "Fetch v13: per partition, by topic id, records empty",
        1,
        13,
        {
            "topics": [
                {
                    "topic_id": TOPIC_ID,
                    "partitions": [{"partition": 1, "fetch_offset": 0, "partition_max_bytes": 1}],
                }
            ]
        },
        False,
        {"top": 0, "responses[0].partitions[0]": 6},
        {
            "responses": [
                {
                    "topic_id": TOPIC_ID,
                    "partitions": [{"partition_index": 1, "records": b"", "high_watermark": -1}],
                }
            ]
        },
    ),
    ("Heartbeat: top level", 12, 4, {"group_id": "g", "member_id": "m"}, False, {"top": 6}, {}),
    (
        "JoinGroup: top level, the member id handed back",
        11,
        7,
        {"group_id": "g", "member_id": "m-1", "protocols": [{"name": "range", "metadata": b""}]},
        False,
        {"top": 6},
        {"member_id": "m-1", "members": [], "generation_id": -1},
    ),
    ("DescribeGroups: per group", 15, 5, {"groups": ["a", "b"]}, False, {"groups[0]": 6, "groups[1]": 6}, {}),
    (
        "DeleteGroups: per group",
        42,
        2,
        {"groups_names": ["a"]},
        False,
        {"results[0]": 6},
        {"results": [{"group_id": "a"}]},
    ),
    (
        "OffsetFetch v7 where=top: the top-level code only",
        9,
        7,
        {"group_id": "g", "topics": [{"name": "t", "partition_indexes": [0]}]},
        True,
        {"top": 6},
        {},
    ),
]


@pytest.mark.parametrize(
    ("api_key", "version", "request_body", "top", "errors", "fields"),
    [c[1:] for c in CASES],
    ids=[c[0] for c in CASES],
)
def test_the_error_goes_where_kafka_puts_it(
    api_key: int,
    version: int,
    request_body: dict[str, Any],
    top: bool,
    errors: dict[str, int],
    fields: dict[str, Any],
) -> None:
    api = APIS[api_key]
    request = api.request.parse(api.request.build(request_body, version), version)
    answer = error_answer(api, version, request, ErrorCode.NOT_LEADER_OR_FOLLOWER, top=top)
    parsed = api.response.parse(api.response.build(answer, version), version)
    assert {where: code for where, code in _errors(parsed).items() if code or where in errors} == errors
    _assert_subset(fields, parsed)


def _assert_subset(expected: Any, actual: Any) -> None:
    if isinstance(expected, dict):
        for key, value in expected.items():
            _assert_subset(value, actual[key])
    elif isinstance(expected, list):
        assert len(expected) == len(actual)
        for each, other in zip(expected, actual, strict=True):
            _assert_subset(each, other)
    else:
        assert actual == expected


def test_a_request_whose_answer_has_nowhere_to_carry_the_error_is_refused() -> None:
    api = APIS[15]  # DescribeGroups: errors per group, and no group asked about
    request = api.request.parse(api.request.build({"groups": []}, 5), 5)
    with pytest.raises(NoErrorField):
        error_answer(api, 5, request, ErrorCode.NOT_COORDINATOR)
