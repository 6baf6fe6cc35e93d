"""DeleteRecords, IncrementalAlterConfigs, CreateTopics and DescribeConfigs on
a broker with a data directory, through the handlers, and across restarts."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.protocol.messages.describe_configs import ConfigSource, ResourceType
from kafka_shim.protocol.messages.incremental_alter_configs import AlterConfigOp
from kafka_shim.shim.handlers import (
    create_topics,
    delete_records,
    describe_configs,
    incremental_alter_configs,
    list_offsets,
)
from tests.batches import batch, make_batch
from tests.helpers import Harness


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    return tmp_path / "data"


@pytest.fixture
def broker(data_dir: Path) -> Iterator[Harness]:
    h = Harness(data_dir=data_dir, fsync="always")
    yield h
    h.broker.close()


def restarted(h: Harness, data_dir: Path) -> Harness:
    h.broker.close()
    return Harness(data_dir=data_dir, fsync="always")


def delete(h: Harness, version: int, topic: str, partition: int, offset: int) -> Any:
    request = {
        "topics": [{"name": topic, "partitions": [{"partition_index": partition, "offset": offset}]}],
        "timeout_ms": 1000,
    }
    response = h.call(delete_records, version, request)
    assert response is not None
    return response.topics[0].partitions[0]


def earliest(h: Harness, topic: str) -> int:
    request = {
        "replica_id": -1,
        "topics": [{"name": topic, "partitions": [{"partition_index": 0, "timestamp": -2}]}],
    }
    response = h.call(list_offsets, 7, request)
    assert response is not None
    return int(response.topics[0].partitions[0].offset)


def alter(
    h: Harness, topic: str, *changes: tuple[str, AlterConfigOp, str | None], version: int = 1, **kw: Any
) -> Any:
    request = {
        "resources": [
            {
                "resource_type": ResourceType.TOPIC,
                "resource_name": topic,
                "configs": [{"name": n, "config_operation": op, "value": v} for n, op, v in changes],
            }
        ],
        "validate_only": kw.get("validate_only", False),
    }
    response = h.call(incremental_alter_configs, version, request)
    assert response is not None
    return response.responses[0]


def described(h: Harness, topic: str, name: str) -> tuple[str, int]:
    request = {
        "resources": [
            {"resource_type": ResourceType.TOPIC, "resource_name": topic, "configuration_keys": [name]}
        ],
        "include_synonyms": False,
        "include_documentation": False,
    }
    response = h.call(describe_configs, 4, request)
    assert response is not None
    [entry] = response.results[0].configs
    return entry.value, entry.config_source


def filled(h: Harness, topic: str, count: int, **configs: str) -> None:
    h.broker.topics.create(topic, 1, configs)
    log = h.broker.topics.partition(topic, 0)
    assert log is not None
    for _ in range(count):
        log.append(batch(b"x"))


@pytest.mark.parametrize("version", [0, 1, 2])
def test_delete_records_moves_earliest_and_survives_a_restart(
    broker: Harness, data_dir: Path, version: int
) -> None:
    filled(broker, "t", 5)
    answer = delete(broker, version, "t", 0, 3)
    assert (answer.error_code, answer.low_watermark) == (ErrorCode.NONE, 3)
    assert earliest(broker, "t") == 3
    assert delete(broker, version, "t", 0, -1).low_watermark == 5  # -1: the high watermark
    again = restarted(broker, data_dir)
    assert earliest(again, "t") == 5
    again.broker.close()


def test_delete_records_refusals(broker: Harness) -> None:
    filled(broker, "t", 2)
    filled(broker, "compacted", 2, **{"cleanup.policy": "compact"})
    assert delete(broker, 2, "t", 0, 3).error_code == ErrorCode.OFFSET_OUT_OF_RANGE
    assert delete(broker, 2, "t", 0, -7).error_code == ErrorCode.OFFSET_OUT_OF_RANGE
    assert delete(broker, 2, "t", 1, 0).error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    assert delete(broker, 2, "nope", 0, 0).error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    assert delete(broker, 2, "compacted", 0, 1).error_code == ErrorCode.POLICY_VIOLATION


@pytest.mark.parametrize("version", [0, 1])
def test_incremental_alter_configs_operations(broker: Harness, data_dir: Path, version: int) -> None:
    filled(broker, "t", 1)
    assert alter(broker, "t", ("retention.ms", AlterConfigOp.SET, "1000"), version=version).error_code == 0
    assert described(broker, "t", "retention.ms") == ("1000", ConfigSource.DYNAMIC_TOPIC_CONFIG)
    assert broker.broker.topics.partition("t", 0).config.retention_ms == 1000  # type: ignore[union-attr]
    alter(broker, "t", ("cleanup.policy", AlterConfigOp.APPEND, "compact"))
    assert described(broker, "t", "cleanup.policy")[0] == "delete,compact"
    alter(broker, "t", ("cleanup.policy", AlterConfigOp.SUBTRACT, "delete"))
    assert described(broker, "t", "cleanup.policy")[0] == "compact"
    alter(broker, "t", ("segment.bytes", AlterConfigOp.SET, "2048"), validate_only=True)
    assert described(broker, "t", "segment.bytes")[1] != ConfigSource.DYNAMIC_TOPIC_CONFIG
    alter(broker, "t", ("retention.ms", AlterConfigOp.DELETE, None))
    again = restarted(broker, data_dir)
    # The broker's log.retention.ms was never set: Kafka's source is then the default.
    assert described(again, "t", "retention.ms") == ("604800000", ConfigSource.DEFAULT_CONFIG)
    assert described(again, "t", "cleanup.policy") == ("compact", ConfigSource.DYNAMIC_TOPIC_CONFIG)
    again.broker.close()


@pytest.mark.parametrize(
    ("change", "code"),
    [
        (("retention.ms", AlterConfigOp.SET, "soon"), ErrorCode.INVALID_CONFIG),
        (("segment.bytes", AlterConfigOp.SET, "3"), ErrorCode.INVALID_CONFIG),
        (("segment.bytes", AlterConfigOp.SET, str(2**31)), ErrorCode.INVALID_CONFIG),
        (("no.such.config", AlterConfigOp.SET, "1"), ErrorCode.INVALID_CONFIG),
        (("retention.ms", AlterConfigOp.APPEND, "1"), ErrorCode.INVALID_CONFIG),
        (("cleanup.policy", AlterConfigOp.SUBTRACT, "delete"), ErrorCode.INVALID_CONFIG),  # leaves nothing
        (("retention.ms", AlterConfigOp.SET, None), ErrorCode.INVALID_REQUEST),
        (("retention.ms", 9, "1"), ErrorCode.UNKNOWN_SERVER_ERROR),  # Kafka's, without a message
    ],
)
def test_incremental_alter_configs_refusals_change_nothing(
    broker: Harness, change: tuple[str, AlterConfigOp, str | None], code: ErrorCode
) -> None:
    filled(broker, "t", 1)
    answer = alter(broker, "t", ("delete.retention.ms", AlterConfigOp.SET, "5"), change)
    assert answer.error_code == code and (answer.error_message or code == ErrorCode.UNKNOWN_SERVER_ERROR)
    assert broker.broker.topics.get("t").configs == {}  # type: ignore[union-attr]


def test_incremental_alter_configs_other_resources(broker: Harness) -> None:
    assert alter(broker, "nope", ("retention.ms", AlterConfigOp.SET, "1")).error_code == (
        ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    )
    request = {
        "resources": [{"resource_type": ResourceType.BROKER_LOGGER, "resource_name": "0", "configs": []}],
        "validate_only": False,
    }
    response = broker.call(incremental_alter_configs, 1, request)
    assert response is not None and response.responses[0].error_code == ErrorCode.NONE  # no change asked
    client_metrics = {"resource_type": 16, "resource_name": "0", "configs": []}  # not kept here
    response = broker.call(incremental_alter_configs, 1, request | {"resources": [client_metrics]})
    assert response is not None and response.responses[0].error_code == ErrorCode.INVALID_REQUEST


def test_created_topics_come_back_with_their_configs_and_records(broker: Harness, data_dir: Path) -> None:
    request = {
        "topics": [
            {
                "name": "orders",
                "num_partitions": 2,
                "replication_factor": 1,
                "assignments": [],
                "configs": [
                    {"name": "segment.bytes", "value": "4096"},
                    {"name": "retention.bytes", "value": "100000"},
                ],
            }
        ],
        "timeout_ms": 1000,
        "validate_only": False,
    }
    response = broker.call(create_topics, 7, request)
    assert response is not None and response.topics[0].error_code == ErrorCode.NONE
    topic = broker.broker.topics.get("orders")
    assert topic is not None
    for _ in range(100):
        topic.partitions[1].append(batch(b"y" * 100))
    again = restarted(broker, data_dir)
    back = again.broker.topics.get("orders")
    assert back is not None and back.topic_id == topic.topic_id and len(back.partitions) == 2
    assert described(again, "orders", "segment.bytes") == ("4096", ConfigSource.DYNAMIC_TOPIC_CONFIG)
    assert back.partitions[1].log_end_offset == 100
    assert len(back.partitions[1].read(0, 1 << 20)) == 100 * len(make_batch([b"y" * 100]))
    again.broker.close()
