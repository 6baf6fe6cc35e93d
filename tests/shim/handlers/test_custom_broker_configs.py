"""Dynamic broker configs of names Kafka does not know (`kafka-configs.sh --alter
--entity-type brokers --entity-name 0 --add-config no.such.config=1`, a plugin's key): kept and
described as Kafka's ConfigHelper describes them, per broker and as the cluster default."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kafka_shim.protocol.messages.describe_configs import ConfigSource
from tests.helpers import Harness

DESCRIBE_CONFIGS, INCREMENTAL_ALTER_CONFIGS = 32, 44
BROKER, SET, DELETE = 4, 0, 1


def alter(h: Harness, scope: str, name: str, operation: int, value: str | None = None) -> int:
    configs = [{"name": name, "config_operation": operation, "value": value}]
    request = {"resources": [{"resource_type": BROKER, "resource_name": scope, "configs": configs}]}
    (answer,) = h.call(INCREMENTAL_ALTER_CONFIGS, 1, request | {"validate_only": False}).responses
    return int(answer.error_code)


def described(h: Harness, scope: str, keys: list[str] | None = None) -> dict[str, Any]:
    resource = {"resource_type": BROKER, "resource_name": scope, "configuration_keys": keys}
    (result,) = h.call(DESCRIBE_CONFIGS, 4, {"resources": [resource], "include_synonyms": True}).results
    return {c.name: c for c in result.configs}


def test_a_custom_broker_config_is_kept_and_described_as_sensitive() -> None:
    h = Harness()
    assert alter(h, "0", "no.such.config", SET, "1") == 0
    entry = described(h, "0")["no.such.config"]
    assert (entry.value, entry.is_sensitive, entry.read_only, entry.config_type) == (None, True, True, 0)
    assert entry.config_source == ConfigSource.DYNAMIC_BROKER_CONFIG
    assert [(s.name, s.value, s.source) for s in entry.synonyms] == [
        ("no.such.config", None, ConfigSource.DYNAMIC_BROKER_CONFIG)
    ]
    assert list(described(h, "0", ["no.such.config"])) == ["no.such.config"]
    assert "no.such.config" not in described(h, "")  # not a cluster default
    assert alter(h, "0", "no.such.config", DELETE) == 0
    assert "no.such.config" not in described(h, "0")


def test_a_custom_cluster_default_is_described_at_both_levels_and_kept(tmp_path: Path) -> None:
    h = Harness(data_dir=tmp_path)
    assert alter(h, "", "plugin.key", SET, "x") == 0
    at_default = described(h, "")["plugin.key"]
    assert (at_default.value, at_default.config_source) == (None, ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG)
    h.broker.close()
    again = Harness(data_dir=tmp_path)
    assert described(again, "0")["plugin.key"].config_source == ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG
    again.broker.close()
