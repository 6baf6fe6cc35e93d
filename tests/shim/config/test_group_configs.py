"""Groups' own configs (shim.config.group_configs) and the broker values topic configs default
to (shim.config.dynamic.BrokerValues): what the broker used to keep inline."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from kafka_shim.shim.config.broker_config import BrokerConfig
from kafka_shim.shim.config.dynamic import BrokerValues
from kafka_shim.shim.config.group_configs import GroupConfigs
from kafka_shim.shim.coordinator.share.config import ShareGroupConfig
from kafka_shim.storage.data_dir import DataDir

DEFAULTS = ShareGroupConfig.from_broker(BrokerConfig())


def test_a_groups_share_values_override_the_brokers_and_are_kept_across_a_restart(tmp_path: Path) -> None:
    configs = GroupConfigs(DataDir(tmp_path), DEFAULTS)
    configs.replace("g", {"share.record.lock.duration.ms": "1000"})
    assert configs.share_config_of("g").record_lock_duration_ms == 1000
    assert configs.share_config_of("other") == DEFAULTS
    again = GroupConfigs(DataDir(tmp_path), DEFAULTS)
    assert again == {"g": {"share.record.lock.duration.ms": "1000"}}
    again.replace("g", {})  # none left: the broker's apply again, and that is kept too
    assert again.share_config_of("g") == DEFAULTS
    assert GroupConfigs(DataDir(tmp_path), DEFAULTS) == {}


def test_in_memory_group_configs_are_kept_only_while_the_broker_runs() -> None:
    configs = GroupConfigs(None, DEFAULTS)
    configs.replace("g", {"share.delivery.count.limit": "2"})
    assert configs.share_config_of("g").delivery_count_limit == 2
    assert GroupConfigs(None, DEFAULTS) == {}


def test_broker_values_follow_the_configuration_in_force() -> None:
    started = BrokerConfig()
    in_force = [started]
    values = BrokerValues(lambda: in_force[0])
    assert values("log.segment.bytes") == started.known_value("log.segment.bytes")
    # A dynamic change replaces the (frozen) configuration: the values are resolved anew.
    in_force[0] = dataclasses.replace(started, log_segment_bytes=1_048_576)
    assert values("log.segment.bytes") == "1048576"
