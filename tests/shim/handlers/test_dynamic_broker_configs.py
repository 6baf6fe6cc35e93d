"""Dynamic broker configs (IncrementalAlterConfigs / AlterConfigs on BROKER, per broker and
the cluster default ""): what may change while the broker runs does, at once, for every log;
it is described at its level and kept across a restart; the rest is refused as Kafka refuses."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kafka_shim.protocol.errors import ErrorCode
from kafka_shim.protocol.messages.describe_configs import ConfigSource, ResourceType
from kafka_shim.protocol.messages.incremental_alter_configs import AlterConfigOp
from kafka_shim.shim.handlers import alter_configs, describe_configs, incremental_alter_configs
from tests.helpers import Harness

SET, DELETE, APPEND = AlterConfigOp.SET, AlterConfigOp.DELETE, AlterConfigOp.APPEND


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    return tmp_path / "data"


@pytest.fixture
def broker(data_dir: Path) -> Iterator[Harness]:
    h = Harness(data_dir=data_dir, fsync="always")
    yield h
    h.broker.close()


def alter(h: Harness, scope: str, *changes: tuple[str, AlterConfigOp, str | None]) -> Any:
    request = {
        "resources": [
            {
                "resource_type": ResourceType.BROKER,
                "resource_name": scope,
                "configs": [{"name": n, "config_operation": op, "value": v} for n, op, v in changes],
            }
        ],
        "validate_only": False,
    }
    return h.call(incremental_alter_configs, 1, request).responses[0]


def describe(h: Harness, kind: int, name: str, *keys: str) -> Any:
    request = {
        "resources": [
            {"resource_type": kind, "resource_name": name, "configuration_keys": list(keys) or None}
        ],
        "include_synonyms": True,
        "include_documentation": False,
    }
    return h.call(describe_configs, 4, request).results[0]


def test_a_topic_default_changes_for_every_log_and_survives_a_restart(
    broker: Harness, data_dir: Path
) -> None:
    broker.broker.topics.create("t", 1, {})
    assert alter(broker, "0", ("log.retention.ms", SET, "60000")).error_code == ErrorCode.NONE
    assert broker.broker.topics.get("t").partitions[0].config.retention_ms == 60000  # type: ignore[union-attr]
    [entry] = describe(broker, ResourceType.TOPIC, "t", "retention.ms").configs
    assert entry.value == "60000"
    [entry] = describe(broker, ResourceType.BROKER, "0", "log.retention.ms").configs
    assert (entry.value, entry.config_source) == ("60000", ConfigSource.DYNAMIC_BROKER_CONFIG)
    assert [s.source for s in entry.synonyms] == [
        ConfigSource.DYNAMIC_BROKER_CONFIG,
        ConfigSource.DEFAULT_CONFIG,
    ]
    broker.broker.close()
    again = Harness(data_dir=data_dir, fsync="always")
    try:
        assert again.broker.config.log_retention_ms == 60000
        assert again.broker.topics.get("t").partitions[0].config.retention_ms == 60000  # type: ignore[union-attr]
    finally:
        again.broker.close()


def test_cluster_defaults_are_described_at_their_level_and_deleted(broker: Harness) -> None:
    # kafka-reassign-partitions.sh --throttle sets these; --verify removes them.
    rate = ("leader.replication.throttled.rate", SET, "1000000")
    assert alter(broker, "", rate).error_code == ErrorCode.NONE
    [entry] = describe(broker, ResourceType.BROKER, "").configs
    assert (entry.name, entry.value, entry.config_source) == (
        "leader.replication.throttled.rate",
        "1000000",
        ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG,
    )
    [entry] = describe(broker, ResourceType.BROKER, "0", "leader.replication.throttled.rate").configs
    assert entry.config_source == ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG
    assert alter(broker, "", ("leader.replication.throttled.rate", DELETE, None)).error_code == ErrorCode.NONE
    assert describe(broker, ResourceType.BROKER, "").configs == []


def test_a_list_is_appended_to_the_value_in_force(broker: Harness) -> None:
    assert alter(broker, "0", ("log.cleanup.policy", APPEND, "compact")).error_code == ErrorCode.NONE
    assert broker.broker.config.log_cleanup_policy == "delete,compact"


@pytest.mark.parametrize(
    ("scope", "change", "code", "message"),
    [
        (
            "0",
            ("group.max.size", SET, "5"),
            ErrorCode.INVALID_REQUEST,
            "Cannot update these configs dynamically",
        ),
        ("0", ("max.connections", SET, "5"), ErrorCode.INVALID_REQUEST, "Set(max.connections)"),
        ("", ("ssl.keystore.password", SET, "x"), ErrorCode.INVALID_REQUEST, "broker id must be specified"),
        ("0", ("log.retention.ms", SET, "soon"), ErrorCode.INVALID_CONFIG, "must be an integer"),
        ("99", ("log.retention.ms", SET, "5"), ErrorCode.INVALID_REQUEST, "expected 0 or empty string"),
        (
            "abc",
            ("log.retention.ms", SET, "5"),
            ErrorCode.INVALID_REQUEST,
            "must be an integer, but it is: abc",
        ),
    ],
)
def test_refusals_change_nothing(
    broker: Harness, scope: str, change: tuple[str, AlterConfigOp, str], code: ErrorCode, message: str
) -> None:
    answer = alter(broker, scope, ("log.retention.bytes", SET, "1000"), change)
    assert answer.error_code == code and message in answer.error_message
    assert broker.broker.dynamic_configs.scopes == {}
    assert broker.broker.config.log_retention_bytes == -1


def test_legacy_alter_configs_replaces_the_whole_set(broker: Harness) -> None:
    assert alter(broker, "0", ("log.retention.bytes", SET, "1000")).error_code == ErrorCode.NONE
    request = {
        "resources": [
            {
                "resource_type": ResourceType.BROKER,
                "resource_name": "0",
                "configs": [{"name": "log.segment.bytes", "value": "1048576"}],
            }
        ],
        "validate_only": False,
    }
    assert broker.call(alter_configs, 1, request).responses[0].error_code == ErrorCode.NONE
    assert broker.broker.dynamic_configs.get("0") == {"log.segment.bytes": "1048576"}
    assert broker.broker.config.log_retention_bytes == -1


@pytest.mark.parametrize(("release", "described"), [("3.9", False), ("4.0", True), ("4.2", True)])
@pytest.mark.parametrize("key", ["group.consumer.migration.policy", "share.coordinator.threads"])
def test_a_key_is_described_from_the_release_that_introduced_it(
    release: str, described: bool, key: str
) -> None:
    """group.consumer.migration.policy was an internal config of Kafka 3.9's
    GroupCoordinatorConfig (accepted, never described: the corpus' describe_configs cases), the
    share coordinator's configs are new in 4.0: from 4.0 both are described. Asked by name or
    with every config, as Kafka answers."""
    h = Harness(emulate=release)
    for keys in ((key,), ()):
        names = {c.name for c in describe(h, ResourceType.BROKER, "0", *keys).configs}
        assert (key in names) is described
