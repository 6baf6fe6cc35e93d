"""Wire declarations of the share-group APIs (KIP-932), against kafka-clients 4.3's own
encoders (generated from Kafka's message JSON) as the oracle: every version of every
message, with every field set away from its default, encodes to the same bytes, and
parses back to what was built."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from kafka_shim.protocol.messages import (
    alter_share_group_offsets,
    delete_share_group_offsets,
    describe_share_group_offsets,
    share_acknowledge,
    share_fetch,
    share_group_describe,
    share_group_heartbeat,
)
from kafka_shim.protocol.schema import Message
from tests.java_oracle import encode_with_kafka_clients
from tests.strategies import project

TOPIC_ID = uuid.UUID("1b4e28ba-2fa1-11d2-883f-0016cb7d3d2a")
ACKS = [{"first_offset": 5, "last_offset": 7, "acknowledge_types": [1, 2, 3]}]
LEADER = {"leader_id": 1, "leader_epoch": 4}
ENDPOINT = {"node_id": 1, "host": "h", "port": 9092, "rack": "r"}

SAMPLES: dict[str, dict[str, Any]] = {
    "ShareGroupHeartbeatRequest": {
        "group_id": "g",
        "member_id": "m-1",
        "member_epoch": 3,
        "rack_id": "r",
        "subscribed_topic_names": ["t", "u"],
    },
    "ShareGroupHeartbeatResponse": {
        "throttle_time_ms": 1,
        "error_code": 25,
        "error_message": "e",
        "member_id": "m-1",
        "member_epoch": 4,
        "heartbeat_interval_ms": 5000,
        "assignment": {"topic_partitions": [{"topic_id": TOPIC_ID, "partitions": [0, 2]}]},
    },
    "ShareGroupDescribeRequest": {"group_ids": ["g", "h"], "include_authorized_operations": True},
    "ShareGroupDescribeResponse": {
        "throttle_time_ms": 1,
        "groups": [
            {
                "error_code": 69,
                "error_message": "e",
                "group_id": "g",
                "group_state": "Stable",
                "group_epoch": 3,
                "assignment_epoch": 3,
                "assignor_name": "simple",
                "members": [
                    {
                        "member_id": "m",
                        "rack_id": "r",
                        "member_epoch": 3,
                        "client_id": "c",
                        "client_host": "/127.0.0.1",
                        "subscribed_topic_names": ["t"],
                        "assignment": {
                            "topic_partitions": [{"topic_id": TOPIC_ID, "topic_name": "t", "partitions": [0]}]
                        },
                    }
                ],
                "authorized_operations": 8,
            }
        ],
    },
    "ShareFetchRequest": {
        "group_id": "g",
        "member_id": "m",
        "share_session_epoch": 2,
        "max_wait_ms": 500,
        "min_bytes": 1,
        "max_bytes": 1024,
        "max_records": 500,
        "batch_size": 100,
        "share_acquire_mode": 1,
        "is_renew_ack": True,
        "topics": [
            {"topic_id": TOPIC_ID, "partitions": [{"partition_index": 1, "acknowledgement_batches": ACKS}]}
        ],
        "forgotten_topics_data": [{"topic_id": TOPIC_ID, "partitions": [3]}],
    },
    "ShareFetchResponse": {
        "throttle_time_ms": 1,
        "error_code": 122,
        "error_message": "e",
        "acquisition_lock_timeout_ms": 30000,
        "responses": [
            {
                "topic_id": TOPIC_ID,
                "partitions": [
                    {
                        "partition_index": 1,
                        "error_code": 6,
                        "error_message": "f",
                        "acknowledge_error_code": 121,
                        "acknowledge_error_message": "a",
                        "current_leader": LEADER,
                        "records": b"\x00\x01\x02",
                        "acquired_records": [{"first_offset": 5, "last_offset": 9, "delivery_count": 2}],
                    }
                ],
            }
        ],
        "node_endpoints": [ENDPOINT],
    },
    "ShareAcknowledgeRequest": {
        "group_id": "g",
        "member_id": "m",
        "share_session_epoch": 3,
        "is_renew_ack": True,
        "topics": [
            {"topic_id": TOPIC_ID, "partitions": [{"partition_index": 1, "acknowledgement_batches": ACKS}]}
        ],
    },
    "ShareAcknowledgeResponse": {
        "throttle_time_ms": 1,
        "error_code": 123,
        "error_message": "e",
        "acquisition_lock_timeout_ms": 30000,
        "responses": [
            {
                "topic_id": TOPIC_ID,
                "partitions": [
                    {"partition_index": 1, "error_code": 121, "error_message": "f", "current_leader": LEADER}
                ],
            }
        ],
        "node_endpoints": [ENDPOINT],
    },
    "DescribeShareGroupOffsetsRequest": {
        "groups": [
            {"group_id": "g", "topics": [{"topic_name": "t", "partitions": [0, 1]}]},
            {"group_id": "h", "topics": None},
        ]
    },
    "DescribeShareGroupOffsetsResponse": {
        "throttle_time_ms": 1,
        "groups": [
            {
                "group_id": "g",
                "topics": [
                    {
                        "topic_name": "t",
                        "topic_id": TOPIC_ID,
                        "partitions": [
                            {
                                "partition_index": 0,
                                "start_offset": 12,
                                "leader_epoch": 1,
                                "lag": 3,
                                "error_code": 0,
                                "error_message": "x",
                            }
                        ],
                    }
                ],
                "error_code": 16,
                "error_message": "e",
            }
        ],
    },
    "AlterShareGroupOffsetsRequest": {
        "group_id": "g",
        "topics": [{"topic_name": "t", "partitions": [{"partition_index": 0, "start_offset": 42}]}],
    },
    "AlterShareGroupOffsetsResponse": {
        "throttle_time_ms": 1,
        "error_code": 68,
        "error_message": "e",
        "responses": [
            {
                "topic_name": "t",
                "topic_id": TOPIC_ID,
                "partitions": [{"partition_index": 0, "error_code": 3, "error_message": "f"}],
            }
        ],
    },
    "DeleteShareGroupOffsetsRequest": {"group_id": "g", "topics": [{"topic_name": "t"}]},
    "DeleteShareGroupOffsetsResponse": {
        "throttle_time_ms": 1,
        "error_code": 68,
        "error_message": "e",
        "responses": [{"topic_name": "t", "topic_id": TOPIC_ID, "error_code": 3, "error_message": "f"}],
    },
}

MODULES = [
    share_group_heartbeat,
    share_group_describe,
    share_fetch,
    share_acknowledge,
    describe_share_group_offsets,
    alter_share_group_offsets,
    delete_share_group_offsets,
]
MESSAGES: list[Message] = [m for module in MODULES for m in (module.API.request, module.API.response)]
CASES = [
    (message, version)
    for message in MESSAGES
    for version in range(message.versions.low, message.versions.high + 1)
]


@pytest.fixture(scope="module")
def oracle_bytes() -> dict[tuple[str, int], bytes]:
    encoded = encode_with_kafka_clients([(m, v, SAMPLES[m.name]) for m, v in CASES])
    return {(m.name, v): data for (m, v), data in zip(CASES, encoded, strict=True)}


@pytest.mark.parametrize(("message", "version"), CASES, ids=lambda c: getattr(c, "name", str(c)))
def test_bytes_match_kafka_clients(
    message: Message, version: int, oracle_bytes: dict[tuple[str, int], bytes]
) -> None:
    built = message.build(SAMPLES[message.name], version)
    assert built == oracle_bytes[(message.name, version)]
    assert message.parse(built, version) == project(message.fields, SAMPLES[message.name], version)


def test_versions_are_kafka_42s() -> None:
    """The ranges Kafka 4.2 serves (ApiVersions of a 4.2 broker)."""
    served = {module.API.name: (module.API.versions.low, module.API.versions.high) for module in MODULES}
    assert served == {
        "ShareGroupHeartbeat": (1, 1),
        "ShareGroupDescribe": (1, 1),
        "ShareFetch": (1, 2),
        "ShareAcknowledge": (1, 2),
        "DescribeShareGroupOffsets": (0, 1),
        "AlterShareGroupOffsets": (0, 0),
        "DeleteShareGroupOffsets": (0, 0),
    }
