"""The coordinator's settings, under the meaning Kafka gives the broker configs they come from."""

from __future__ import annotations

from dataclasses import dataclass

from kafka_shim.protocol.settings import broker_default
from kafka_shim.shim.config.broker_config import BrokerConfig


@dataclass(frozen=True)
class CoordinatorConfig:
    # Defaults from the settings registry (protocol.settings), under the broker configs' names.
    min_session_timeout_ms: int = broker_default("group.min.session.timeout.ms")
    max_session_timeout_ms: int = broker_default("group.max.session.timeout.ms")
    max_group_size: int = broker_default("group.max.size")
    initial_rebalance_delay_ms: int = broker_default("group.initial.rebalance.delay.ms")
    offsets_retention_ms: int = broker_default("offsets.retention.minutes") * 60_000
    offsets_retention_check_interval_ms: int = broker_default("offsets.retention.check.interval.ms")
    offset_metadata_max_bytes: int = broker_default("offset.metadata.max.bytes")
    # Whether OffsetDelete buries an Empty group it leaves without offsets (Kafka 3.9's old
    # coordinator: protocol.releases.Release.offset_delete_removes_empty_group).
    offset_delete_removes_empty_group: bool = False

    def allows_session_timeout(self, timeout_ms: int) -> bool:
        """A classic member's session timeout within group.min/max.session.timeout.ms (Kafka
        checks it before looking at the group's type, so classic members of a consumer group too)."""
        return self.min_session_timeout_ms <= timeout_ms <= self.max_session_timeout_ms

    @classmethod
    def from_broker(cls, config: BrokerConfig) -> CoordinatorConfig:
        return cls(
            min_session_timeout_ms=config.min_session_timeout_ms,
            max_session_timeout_ms=config.max_session_timeout_ms,
            max_group_size=config.max_group_size,
            initial_rebalance_delay_ms=config.initial_rebalance_delay_ms,
            offsets_retention_ms=config.offsets_retention_minutes * 60_000,
            offsets_retention_check_interval_ms=config.offsets_retention_check_interval_ms,
            offset_metadata_max_bytes=config.offset_metadata_max_bytes,
            # 3.9 ran the new coordinator only with the consumer protocol enabled.
            offset_delete_removes_empty_group=config.release.offset_delete_removes_empty_group
            and not config.consumer_protocol_enabled,
        )
