"""TxnOffsetCommit's declaration against Kafka's JSON spec and kafka-python 3.0.12's
encoder (generated from that JSON): for every version, a sample holding a non-default
value in every field builds the same bytes in both libraries and parses back to itself.
"""

from __future__ import annotations

from typing import Any

import pytest
from kafka.protocol.producer.transaction import TxnOffsetCommitRequest as KafkaPythonRequest
from kafka.protocol.producer.transaction import TxnOffsetCommitResponse as KafkaPythonResponse

from kafka_shim.protocol.messages.txn_offset_commit import (
    API,
    TxnOffsetCommitRequest,
    TxnOffsetCommitResponse,
)
from kafka_shim.protocol.schema import Message

REQUEST = {
    "transactional_id": "txn-1",
    "group_id": "group-a",
    "producer_id": 1_234_567_890_123,
    "producer_epoch": 7,
    "generation_id": 3,
    "member_id": "member-1",
    "group_instance_id": "instance-1",
    "topics": [
        {
            "name": "input",
            "partitions": [
                {
                    "partition_index": 2,
                    "committed_offset": 42,
                    "committed_leader_epoch": 5,
                    "committed_metadata": "meta",
                }
            ],
        }
    ],
}
RESPONSE = {
    "throttle_time_ms": 4,
    "topics": [{"name": "input", "partitions": [{"partition_index": 2, "error_code": 48}]}],
}
CASES = [
    (message, sample, reference, version)
    for message, sample, reference in (
        (TxnOffsetCommitRequest, REQUEST, KafkaPythonRequest),
        (TxnOffsetCommitResponse, RESPONSE, KafkaPythonResponse),
    )
    for version in range(6)
]


def test_key_and_ranges_are_kafka_4s() -> None:
    assert (API.key, API.name) == (28, "TxnOffsetCommit")
    for message in (API.request, API.response):
        assert (message.versions.low, message.versions.high) == (0, 5)
        assert [v for v in range(6) if v in message.flexible] == [3, 4, 5]


@pytest.mark.parametrize(("message", "sample", "reference", "version"), CASES, ids=str)
def test_bytes_equal_kafka_python_encoder(
    message: Message, sample: dict[str, Any], reference: Any, version: int
) -> None:
    ours = message.build(sample, version)
    decoded = reference.decode(ours, version=version)
    assert bytes(decoded.encode()) == ours
    assert message.build(message.parse(ours, version), version) == ours


def test_v3_fields_hold_their_defaults_before_v3() -> None:
    parsed = TxnOffsetCommitRequest.parse(TxnOffsetCommitRequest.build(REQUEST, 2), 2)
    assert (parsed.generation_id, parsed.member_id, parsed.group_instance_id) == (-1, "", None)
    assert parsed.topics[0].partitions[0].committed_leader_epoch == 5
    v1 = TxnOffsetCommitRequest.parse(TxnOffsetCommitRequest.build(REQUEST, 1), 1)
    assert v1.topics[0].partitions[0].committed_leader_epoch == -1


def test_null_metadata_and_instance_id_stay_null() -> None:
    content = {
        **REQUEST,
        "group_instance_id": None,
        "topics": [
            {
                "name": "t",
                "partitions": [{"partition_index": 0, "committed_offset": 1, "committed_metadata": None}],
            }
        ],
    }
    parsed = TxnOffsetCommitRequest.parse(TxnOffsetCommitRequest.build(content, 3), 3)
    assert parsed.group_instance_id is None
    assert parsed.topics[0].partitions[0].committed_metadata is None
