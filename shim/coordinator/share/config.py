"""A share group's settings: the broker's group.share.* configs, which a group's own share.*
configs (IncrementalAlterConfigs on the GROUP resource, as Kafka 4.2 names them) override."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from kafka_shim.shim.config import BrokerConfig
from kafka_shim.shim.coordinator.share.partition import PartitionLimits

EARLIEST, LATEST = "earliest", "latest"
BY_DURATION = "by_duration:"  # followed by an ISO-8601 duration (PnDTnHnMn.nS)
READ_UNCOMMITTED, READ_COMMITTED = "read_uncommitted", "read_committed"

# group config name -> ShareGroupConfig field
GROUP_CONFIG_FIELDS: Mapping[str, str] = {
    "share.session.timeout.ms": "session_timeout_ms",
    "share.heartbeat.interval.ms": "heartbeat_interval_ms",
    "share.record.lock.duration.ms": "record_lock_duration_ms",
    "share.delivery.count.limit": "delivery_count_limit",
    "share.partition.max.record.locks": "partition_max_record_locks",
    "share.auto.offset.reset": "auto_offset_reset",
    "share.isolation.level": "isolation_level",
    "share.renew.acknowledge.enable": "renew_acknowledge_enable",
}


@dataclass(frozen=True)
class ShareGroupConfig:
    session_timeout_ms: int = 45_000
    heartbeat_interval_ms: int = 5_000
    max_size: int = 200
    record_lock_duration_ms: int = 30_000
    delivery_count_limit: int = 5
    partition_max_record_locks: int = 2000
    auto_offset_reset: str = LATEST
    isolation_level: str = READ_UNCOMMITTED
    renew_acknowledge_enable: bool = True

    @property
    def limits(self) -> PartitionLimits:
        return PartitionLimits(
            self.record_lock_duration_ms, self.delivery_count_limit, self.partition_max_record_locks
        )

    @property
    def read_committed(self) -> bool:
        return self.isolation_level == READ_COMMITTED

    def with_overrides(self, overrides: Mapping[str, str]) -> ShareGroupConfig:
        """This config with a group's own share.* values (already validated) in place."""
        changes: dict[str, Any] = {}
        for name, value in overrides.items():
            attr = GROUP_CONFIG_FIELDS.get(name)
            if attr is None:
                continue
            current = getattr(self, attr)
            if isinstance(current, bool):
                changes[attr] = value.lower() == "true"
            elif isinstance(current, int):
                changes[attr] = int(value)
            else:
                changes[attr] = value
        return replace(self, **changes) if changes else self

    @classmethod
    def from_broker(cls, config: BrokerConfig) -> ShareGroupConfig:
        return cls(
            session_timeout_ms=config.share_session_timeout_ms,
            heartbeat_interval_ms=config.share_heartbeat_interval_ms,
            max_size=config.share_max_size,
            record_lock_duration_ms=config.share_record_lock_duration_ms,
            delivery_count_limit=config.share_delivery_count_limit,
            partition_max_record_locks=config.share_partition_max_record_locks,
        )
