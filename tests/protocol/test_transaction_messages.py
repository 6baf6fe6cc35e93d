"""Wire declarations of the transaction APIs.

Every version round-trips a sample with every field set, and the bytes we build
equal what kafka-python 3.0.12's encoders (generated from Kafka's message JSON)
produce for the same content.
"""

from __future__ import annotations

from typing import Any

import pytest
from kafka.protocol.admin import transactions as kp_admin
from kafka.protocol.producer import transaction as kp_txn

from kafka_shim.protocol.messages import (
    add_offsets_to_txn,
    add_partitions_to_txn,
    describe_transactions,
    end_txn,
    list_transactions,
    produce,
)
from kafka_shim.protocol.schema import Message
from tests.strategies import project

TOPICS = [{"name": "t", "partitions": [0, 2]}]
RESULTS = [
    {"name": "t", "results_by_partition": [{"partition_index": 0, "partition_error_code": 48}]},
]

SAMPLES: dict[str, dict[str, Any]] = {
    "AddPartitionsToTxnRequest": {
        "transactions": [
            {
                "transactional_id": "tx",
                "producer_id": 7,
                "producer_epoch": 3,
                "verify_only": True,
                "topics": TOPICS,
            }
        ],
        "v3_and_below_transactional_id": "tx",
        "v3_and_below_producer_id": 7,
        "v3_and_below_producer_epoch": 3,
        "v3_and_below_topics": TOPICS,
    },
    "AddPartitionsToTxnResponse": {
        "throttle_time_ms": 1,
        "error_code": 51,
        "results_by_transaction": [{"transactional_id": "tx", "topic_results": RESULTS}],
        "results_by_topic_v3_and_below": RESULTS,
    },
    "AddOffsetsToTxnRequest": {
        "transactional_id": "tx",
        "producer_id": 7,
        "producer_epoch": 3,
        "group_id": "g",
    },
    "AddOffsetsToTxnResponse": {"throttle_time_ms": 1, "error_code": 90},
    "EndTxnRequest": {"transactional_id": "tx", "producer_id": 7, "producer_epoch": 3, "committed": True},
    "EndTxnResponse": {"throttle_time_ms": 1, "error_code": 0, "producer_id": 8, "producer_epoch": 4},
    "ListTransactionsRequest": {
        "state_filters": ["Ongoing"],
        "producer_id_filters": [7, 8],
        "duration_filter": 1000,
        "transactional_id_pattern": "tx-.*",
    },
    "ListTransactionsResponse": {
        "throttle_time_ms": 1,
        "error_code": 0,
        "unknown_state_filters": ["Bogus"],
        "transaction_states": [{"transactional_id": "tx", "producer_id": 7, "transaction_state": "Ongoing"}],
    },
    "DescribeTransactionsRequest": {"transactional_ids": ["tx", "ty"]},
    "DescribeTransactionsResponse": {
        "throttle_time_ms": 1,
        "transaction_states": [
            {
                "error_code": 0,
                "transactional_id": "tx",
                "transaction_state": "Ongoing",
                "transaction_timeout_ms": 60000,
                "transaction_start_time_ms": 1700000000000,
                "producer_id": 7,
                "producer_epoch": 3,
                "topics": [{"topic": "t", "partitions": [0, 1]}],
            }
        ],
    },
}

MODULES = [add_partitions_to_txn, add_offsets_to_txn, end_txn, list_transactions, describe_transactions]
KAFKA_PYTHON = {**vars(kp_txn), **vars(kp_admin)}

# key, lowest, highest, first flexible version: Kafka 4.0's ranges.
EXPECTED_RANGES = {
    "AddPartitionsToTxn": (24, 0, 5, 3),
    "AddOffsetsToTxn": (25, 0, 4, 3),
    "EndTxn": (26, 0, 5, 3),
    "ListTransactions": (66, 0, 2, 0),  # v2: transactional id pattern (Kafka 4.1)
    "DescribeTransactions": (65, 0, 0, 0),
}


def _messages() -> list[tuple[Message, int]]:
    return [
        (message, version)
        for module in MODULES
        for message in (module.API.request, module.API.response)
        for version in range(message.versions.low, message.versions.high + 1)
    ]


def _plain(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items() if not k.startswith("_")}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


@pytest.mark.parametrize("module", MODULES, ids=lambda m: m.API.name)
def test_version_ranges_match_kafka(module: Any) -> None:
    key, low, high, flexible_from = EXPECTED_RANGES[module.API.name]
    assert module.API.key == key
    for message in (module.API.request, module.API.response):
        assert (message.versions.low, message.versions.high) == (low, high)
        assert [v for v in range(low, high + 1) if v in message.flexible] == list(
            range(flexible_from, high + 1)
        )


def test_produce_reaches_v13() -> None:
    """v12: KIP-890's second transaction protocol; v13: topics named by id (Kafka 4.1)."""
    assert produce.API.versions.high == 13
    assert 12 in produce.API.request.flexible and 13 in produce.API.request.flexible


@pytest.mark.parametrize(("message", "version"), _messages(), ids=str)
def test_round_trip_every_version(message: Message, version: int) -> None:
    sample = SAMPLES[message.name]
    data = message.build(sample, version)
    parsed = _plain(message.parse(data, version))
    assert parsed == project(message.fields, sample, version)
    assert message.build(parsed, version) == data


@pytest.mark.parametrize(("message", "version"), _messages(), ids=str)
def test_bytes_equal_kafka_python_encoder(message: Message, version: int) -> None:
    cls = KAFKA_PYTHON[message.name]
    ours = message.build(SAMPLES[message.name], version)
    decoded = cls.decode(ours, version=version)
    expected = project(message.fields, SAMPLES[message.name], version)
    for f in message.fields:
        if version in f.versions and isinstance(expected[f.name], (int, str, bytes)):
            assert getattr(decoded, f.name) == expected[f.name], f.name
    assert bytes(decoded.encode()) == ours
