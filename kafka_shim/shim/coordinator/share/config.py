"""A share group's settings: the broker's group.share.* configs, which a group's own share.*
configs (IncrementalAlterConfigs on the GROUP resource, as Kafka 4.2 names them) override."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from kafka_shim.protocol.settings import ConfigType
from kafka_shim.shim.config.broker_config import BrokerConfig

if TYPE_CHECKING:  # a share partition's module loads with share groups, not at start-up
    from kafka_shim.shim.coordinator.share.partition import PartitionLimits

EARLIEST, LATEST = "earliest", "latest"
BY_DURATION = "by_duration:"  # followed by an ISO-8601 duration (PnDTnHnMn.nS)
READ_UNCOMMITTED, READ_COMMITTED = "read_uncommitted", "read_committed"
_DURATION = re.compile(r"^P(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+(?:\.\d+)?)S)?)?$")

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

STRING_CONFIGS = frozenset({"share.auto.offset.reset", "share.isolation.level"})
GROUP_CONFIG_TYPES: Mapping[str, ConfigType] = {
    name: ConfigType.STRING
    if name in STRING_CONFIGS
    else ConfigType.BOOLEAN
    if name == "share.renew.acknowledge.enable"
    else ConfigType.INT
    for name in GROUP_CONFIG_FIELDS
}


def invalid_group_config(name: str, value: str, broker: BrokerConfig) -> str | None:
    """Why `value` cannot be the group config `name` (INVALID_CONFIG), as Kafka's GroupConfig
    validates it; None if it can."""
    if name not in GROUP_CONFIG_FIELDS:
        return f"Unknown group config name: {name} (this broker has the share.* group configs)"
    if name == "share.auto.offset.reset":
        duration_ok = (
            value.startswith(BY_DURATION) and parse_duration_ms(value[len(BY_DURATION) :]) is not None
        )
        return None if value in (EARLIEST, LATEST) or duration_ok else f"Invalid value {value} for {name}"
    if name == "share.isolation.level":
        return None if value in (READ_UNCOMMITTED, READ_COMMITTED) else f"Invalid value {value} for {name}"
    if name == "share.renew.acknowledge.enable":
        return None if value.lower() in ("true", "false") else f"Invalid value {value} for {name}"
    try:
        number = int(value)
    except ValueError:
        return f"Invalid value {value} for {name}: not an integer"
    low, high = {
        "share.record.lock.duration.ms": (
            broker.share_min_record_lock_duration_ms,
            broker.share_max_record_lock_duration_ms,
        ),
        "share.delivery.count.limit": (2, 10),
        "share.partition.max.record.locks": (100, 10_000),
    }.get(name, (1, 2**31 - 1))
    return None if low <= number <= high else f"{name} must be between {low} and {high}"


def parse_duration_ms(text: str) -> int | None:
    """An ISO-8601 duration as Java's Duration.parse reads it (PnDTnHnMn.nS), in ms."""
    match = _DURATION.match(text.upper())
    if match is None or text.upper() in ("P", "PT"):
        return None
    days, hours, minutes, seconds = match.groups()
    total = int(days or 0) * 86400 + int(hours or 0) * 3600 + int(minutes or 0) * 60 + float(seconds or 0)
    return int(total * 1000)


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
    # the emulated release's (protocol.releases.Release.share_leaving_gives_back_deliveries)
    leaving_gives_back_deliveries: bool = False

    @property
    def limits(self) -> PartitionLimits:
        from kafka_shim.shim.coordinator.share.partition import PartitionLimits

        return PartitionLimits(
            self.record_lock_duration_ms,
            self.delivery_count_limit,
            self.partition_max_record_locks,
            self.leaving_gives_back_deliveries,
        )

    @property
    def read_committed(self) -> bool:
        return self.isolation_level == READ_COMMITTED

    def value_of(self, name: str) -> str:
        """A group config's value in Kafka's text form."""
        value = getattr(self, GROUP_CONFIG_FIELDS[name])
        return str(value).lower() if isinstance(value, bool) else str(value)

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
            leaving_gives_back_deliveries=config.release.share_leaving_gives_back_deliveries,
        )
